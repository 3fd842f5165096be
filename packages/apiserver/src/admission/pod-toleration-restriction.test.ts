// PodTolerationRestriction: namespace (else cluster) default tolerations merged into pods, the
// memory-pressure toleration for non-BestEffort pods, whitelists, and its configuration.
import type { ApiObject, Pod, Toleration } from '@svc/api';
import { ConfigurationError } from '../options.js';
import {
  parsePodTolerationRestrictionConfig,
  PodTolerationRestriction,
  type PodTolerationRestrictionConfig,
} from './pod-toleration-restriction.js';
import { attributes, failure, podObject } from './admission-testing.js';
import { isSuperset, mergeTolerations, verifyAgainstWhitelist } from './tolerations.js';

const DEFAULTS = 'scheduler.alpha.svc.io/defaultTolerations';
const WHITELIST = 'scheduler.alpha.svc.io/tolerationsWhitelist';
const MEMORY = { key: 'node.svc.io/memory-pressure', operator: 'Exists', effect: 'NoSchedule' };
const gpu: Toleration = { key: 'gpu', operator: 'Equal', value: 'yes', effect: 'NoSchedule' };
const db: Toleration = { key: 'db', operator: 'Exists', effect: 'NoSchedule' };

const ns = (name: string, annotations?: Record<string, string>): ApiObject => ({ metadata: { name, annotations } });
const namespaces: Record<string, ApiObject> = {
  plain: ns('plain'),
  defaults: ns('defaults', { [DEFAULTS]: JSON.stringify([gpu]) }),
  strict: ns('strict', { [WHITELIST]: JSON.stringify([gpu]) }),
  open: ns('open', { [WHITELIST]: '' }),
  garbage: ns('garbage', { [DEFAULTS]: '{not json' }),
};

const plugin = (config: Partial<PodTolerationRestrictionConfig> = {}): PodTolerationRestriction =>
  new PodTolerationRestriction({
    getNamespace: async (name) => namespaces[name],
    config: { default: [], whitelist: [], ...config },
  });

const burstable = { containers: [{ name: 'c', image: 'x', resources: { requests: { cpu: '100m' } } }] };

async function admitted(
  p: PodTolerationRestriction,
  namespace: string,
  o: { spec?: Record<string, unknown>; operation?: 'CREATE' | 'UPDATE' } = {},
): Promise<Toleration[] | undefined> {
  const object = podObject(o.spec ?? {}, { namespace });
  const operation = o.operation ?? 'CREATE';
  const a = attributes({
    resource: 'pods',
    namespace,
    operation,
    object,
    oldObject: operation === 'UPDATE' ? object : undefined,
  });
  await p.admit(a);
  await p.validate(a);
  return (a.object as Pod).spec.tolerations;
}

describe('tolerations', () => {
  it('covers as Kubernetes isSuperset does', () => {
    expect(isSuperset({ operator: 'Exists' }, gpu)).toBe(true);
    expect(isSuperset({ key: 'gpu', operator: 'Exists' }, gpu)).toBe(true);
    expect(isSuperset({ key: 'gpu', operator: 'Equal', value: 'no' }, gpu)).toBe(false);
    expect(isSuperset({ key: 'gpu', operator: 'Exists', effect: 'NoExecute' }, gpu)).toBe(false);
    const noExec = (s?: number): Toleration => ({
      key: 'k',
      operator: 'Exists',
      effect: 'NoExecute',
      tolerationSeconds: s,
    });
    expect(isSuperset(noExec(10), noExec(5))).toBe(true);
    expect(isSuperset(noExec(5), noExec(10))).toBe(false);
    expect(isSuperset(noExec(5), noExec())).toBe(false);
  });

  it('merges without covered ones, and verifies against whitelists', () => {
    expect(mergeTolerations([gpu], [{ key: 'gpu', operator: 'Exists' }, gpu])).toEqual([
      { key: 'gpu', operator: 'Exists' },
    ]);
    expect(mergeTolerations([gpu, db], [gpu])).toEqual([gpu, db]);
    expect(verifyAgainstWhitelist([gpu], [])).toBe(true);
    expect(verifyAgainstWhitelist([gpu, db], [{ operator: 'Exists', effect: 'NoSchedule' }])).toBe(true);
    expect(verifyAgainstWhitelist([gpu, db], [gpu])).toBe(false);
  });
});

describe('the plugin', () => {
  it('adds the namespace defaults (else the cluster ones) on create, and memory-pressure for non-BestEffort pods', async () => {
    expect(await admitted(plugin(), 'defaults')).toEqual([gpu]);
    expect(await admitted(plugin({ default: [db] }), 'plain', { spec: { tolerations: [gpu] } })).toEqual([gpu, db]);
    expect(await admitted(plugin({ default: [db] }), 'defaults')).toEqual([gpu]);
    expect(await admitted(plugin(), 'plain', { spec: burstable })).toEqual([MEMORY]);
    expect(await admitted(plugin(), 'plain')).toBeUndefined();
  });

  it('on update adds only memory-pressure', async () => {
    expect(await admitted(plugin({ default: [db] }), 'defaults', { spec: burstable, operation: 'UPDATE' })).toEqual([
      MEMORY,
    ]);
  });

  it('refuses tolerations outside the namespace whitelist (else the cluster one) with Kubernetes plain error', async () => {
    await admitted(plugin(), 'strict', { spec: { tolerations: [gpu] } });
    const s = await failure(admitted(plugin(), 'strict', { spec: { tolerations: [db] } }));
    expect([s.code, s.reason, s.message]).toEqual([
      500,
      undefined,
      'pod tolerations (possibly merged with namespace default tolerations) conflict with its namespace whitelist',
    ]);
    // The memory-pressure toleration must be whitelisted too.
    await failure(admitted(plugin(), 'strict', { spec: burstable }));
    expect(
      (await failure(admitted(plugin({ whitelist: [gpu] }), 'plain', { spec: { tolerations: [db] } }))).message,
    ).toBe('pod tolerations (possibly merged with namespace default tolerations) conflict with its cluster whitelist');
    // An empty namespace whitelist is the namespace's own, and allows everything.
    await admitted(plugin({ whitelist: [gpu] }), 'open', { spec: { tolerations: [db] } });
  });

  it('answers a missing namespace with a 404 and a bad annotation with a plain 500', async () => {
    expect((await failure(admitted(plugin(), 'missing'))).message).toBe('namespaces "missing" not found');
    const s = await failure(admitted(plugin(), 'garbage'));
    expect([s.code, s.reason]).toEqual([500, undefined]);
  });
});

describe('the configuration', () => {
  const config = (o: object): unknown => ({
    apiVersion: 'podtolerationrestriction.admission.svc.io/v1alpha1',
    kind: 'Configuration',
    ...o,
  });

  it('reads default and whitelist', () => {
    expect(parsePodTolerationRestrictionConfig(undefined)).toEqual({ default: [], whitelist: [] });
    expect(parsePodTolerationRestrictionConfig(config({ default: [gpu], whitelist: [gpu, db] }))).toEqual({
      default: [gpu],
      whitelist: [gpu, db],
    });
  });

  it('refuses invalid tolerations with Kubernetes messages', () => {
    const raw = config({
      default: [{ operator: 'Equal' }],
      whitelist: [{ key: 'k', operator: 'Sometimes', effect: 'Never' }],
    });
    expect(() => parsePodTolerationRestrictionConfig(raw)).toThrow(ConfigurationError);
    expect(() => parsePodTolerationRestrictionConfig(raw)).toThrow(
      '--admission-control-config-file: PodTolerationRestriction: invalid config: [' +
        'podtolerationrestriction.default[0].operator: Invalid value: "Equal": operator must be Exists when `key` is empty, which means "match all values and all keys" ' +
        'podtolerationrestriction.whitelist[0].operator: Unsupported value: "Sometimes": supported values: "Equal", "Exists" ' +
        'podtolerationrestriction.whitelist[0].effect: Unsupported value: "Never": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"]',
    );
    expect(() => parsePodTolerationRestrictionConfig({ kind: 'Configuration', default: [] })).toThrow(
      'expected kind Configuration in',
    );
  });
});
