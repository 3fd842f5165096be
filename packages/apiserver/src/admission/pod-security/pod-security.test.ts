// The PodSecurity plugin over in-memory namespaces and pods: enforce, audit and warn, the
// audit annotations (no audit backend shows them yet), workload templates, exemptions from
// the configuration, namespace label checks and relabel warnings.
import {
  builtinCatalog,
  isStatusError,
  useNaming,
  type ApiObject,
  type Namespace,
  type Pod,
  type PodSpec,
  type ResourceType,
} from '@svc/api';
import { ConfigurationError } from '../../options.js';
import type { AdmissionAttributes } from '../admission.js';
import { DEFAULT_POD_SECURITY_CONFIG, parsePodSecurityConfig, type PodSecurityConfig } from './config.js';
import { PodSecurity } from './pod-security.js';

useNaming('svc');
const catalog = builtinCatalog();
const P = 'pod-security.svc.io';

/** A served type, or one this server does not serve yet (StatefulSet, Job...) shaped like Deployment. */
function resource(group: string, plural: string): ResourceType {
  const r = catalog.lookup(group, 'v1', plural);
  if (r) return r;
  const like = catalog.lookup('apps', 'v1', 'deployments');
  if (!like) throw new Error('no deployments');
  return { ...like, group, plural };
}

function attrs(o: {
  resource: [string, string];
  object: ApiObject;
  oldObject?: ApiObject;
  operation?: 'CREATE' | 'UPDATE';
  namespace?: string;
  user?: string;
  subresource?: string;
}): AdmissionAttributes {
  return {
    operation: o.operation ?? 'CREATE',
    resource: resource(...o.resource),
    subresource: o.subresource ?? '',
    namespace: o.namespace ?? o.object.metadata.namespace ?? '',
    name: o.object.metadata.name ?? '',
    object: o.object,
    oldObject: o.oldObject,
    dryRun: false,
    user: { name: o.user ?? 'alice', groups: [] },
    warnings: [],
    annotations: {},
  };
}

const ns = (name: string, labels: Record<string, string> = {}): Namespace => ({
  apiVersion: 'v1',
  kind: 'Namespace',
  metadata: { name, labels },
});

/** Violates restricted (not baseline) in four ways. */
const plainSpec = (): PodSpec => ({ containers: [{ name: 'c', image: 'busybox' }] });
const RESTRICTED_DETAIL =
  'allowPrivilegeEscalation != false (container "c" must set securityContext.allowPrivilegeEscalation=false), ' +
  'unrestricted capabilities (container "c" must set securityContext.capabilities.drop=["ALL"]), ' +
  'runAsNonRoot != true (pod or container "c" must set securityContext.runAsNonRoot=true), ' +
  'seccompProfile (pod or container "c" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")';

const pod = (name: string, namespace: string, spec: PodSpec = plainSpec()): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace },
  spec,
});

function plugin(o: { namespaces: Namespace[]; pods?: Pod[]; config?: PodSecurityConfig }): PodSecurity {
  return new PodSecurity({
    config: o.config ?? DEFAULT_POD_SECURITY_CONFIG,
    getNamespace: (name) => Promise.resolve(o.namespaces.find((n) => n.metadata.name === name)),
    listPods: (namespace) => Promise.resolve((o.pods ?? []).filter((p) => p.metadata.namespace === namespace)),
  });
}

async function rejection(p: Promise<void>): Promise<{ code: number; message: string; reason?: string }> {
  try {
    await p;
  } catch (e) {
    if (isStatusError(e)) return { code: e.status.code, message: e.status.message ?? '', reason: e.status.reason };
    throw e;
  }
  throw new Error('expected a rejection');
}

describe('pods', () => {
  it('enforce: 403 with Kubernetes message and the enforce-policy annotation', async () => {
    const p = plugin({ namespaces: [ns('a', { [`${P}/enforce`]: 'restricted' })] });
    const a = attrs({ resource: ['', 'pods'], object: pod('x', 'a') });
    expect(await rejection(p.validate(a))).toEqual({
      code: 403,
      reason: 'Forbidden',
      message: `pods "x" is forbidden: violates PodSecurity "restricted:latest": ${RESTRICTED_DETAIL}`,
    });
    // The warn level follows the enforce level, but a denied request gets no warning.
    expect(a.warnings).toEqual([]);
    expect(a.annotations).toEqual({ [`${P}/enforce-policy`]: 'restricted:latest' });
  });

  it('warn and audit: a Warning and the audit-violations annotation, the pod admitted', async () => {
    const p = plugin({
      namespaces: [
        ns('a', {
          [`${P}/enforce`]: 'baseline',
          [`${P}/warn`]: 'restricted',
          [`${P}/warn-version`]: 'v1.30',
          [`${P}/audit`]: 'restricted',
        }),
      ],
    });
    const a = attrs({ resource: ['', 'pods'], object: pod('x', 'a') });
    await p.validate(a);
    expect(a.warnings).toEqual([`would violate PodSecurity "restricted:v1.30": ${RESTRICTED_DETAIL}`]);
    expect(a.annotations).toEqual({
      [`${P}/enforce-policy`]: 'baseline:latest',
      [`${P}/audit-violations`]: `would violate PodSecurity "restricted:latest": ${RESTRICTED_DETAIL}`,
    });
  });

  it('a privileged namespace admits everything with enforce-policy privileged:latest', async () => {
    const p = plugin({ namespaces: [ns('a')] });
    const a = attrs({ resource: ['', 'pods'], object: pod('x', 'a', { hostPID: true, containers: [{ name: 'c' }] }) });
    await p.validate(a);
    expect(a.warnings).toEqual([]);
    expect(a.annotations).toEqual({ [`${P}/enforce-policy`]: 'privileged:latest' });
  });

  it('updates: only a change of containers or images is evaluated; status and exec never', async () => {
    const p = plugin({ namespaces: [ns('a', { [`${P}/enforce`]: 'restricted' })] });
    const old = pod('x', 'a');
    const relabelled = { ...pod('x', 'a'), metadata: { name: 'x', namespace: 'a', labels: { k: 'v' } } };
    await p.validate(attrs({ resource: ['', 'pods'], operation: 'UPDATE', object: relabelled, oldObject: old }));
    const newImage = pod('x', 'a', { containers: [{ name: 'c', image: 'busybox:2' }] });
    await expect(
      p.validate(attrs({ resource: ['', 'pods'], operation: 'UPDATE', object: newImage, oldObject: old })),
    ).rejects.toThrow(/violates PodSecurity "restricted:latest"/);
    await p.validate(
      attrs({ resource: ['', 'pods'], operation: 'UPDATE', object: newImage, oldObject: old, subresource: 'status' }),
    );
    const debug = pod('x', 'a', {
      containers: [{ name: 'c', image: 'busybox' }],
      ephemeralContainers: [{ name: 'd', image: 'b' }],
    });
    await expect(
      p.validate(
        attrs({
          resource: ['', 'pods'],
          operation: 'UPDATE',
          object: debug,
          oldObject: old,
          subresource: 'ephemeralcontainers',
        }),
      ),
    ).rejects.toThrow(/containers "c", "d" must set/);
  });

  it('bad namespace labels: enforce falls back to restricted:latest, the error is annotated', async () => {
    const p = plugin({ namespaces: [ns('a', { [`${P}/enforce`]: 'bogus' })] });
    const a = attrs({ resource: ['', 'pods'], object: pod('x', 'a') });
    expect((await rejection(p.validate(a))).message).toContain('violates PodSecurity "restricted:latest"');
    expect(a.annotations[`${P}/error`]).toBe(
      `Failed to parse policy: metadata.labels[${P}/enforce]: Invalid value: "bogus": must be one of privileged, baseline, restricted`,
    );
  });

  it('a missing namespace is a 500', async () => {
    const p = plugin({ namespaces: [] });
    expect(await rejection(p.validate(attrs({ resource: ['', 'pods'], object: pod('x', 'gone') })))).toMatchObject({
      code: 500,
      message: 'Internal error occurred: failed to lookup namespace "gone"',
    });
  });
});

describe('workload resources: warn and audit only', () => {
  const deployment = (spec: PodSpec): ApiObject => ({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'd', namespace: 'a' },
    spec: { selector: { matchLabels: { app: 'd' } }, template: { metadata: { labels: { app: 'd' } }, spec } },
  });

  it.each([
    ['apps', 'deployments'],
    ['apps', 'replicasets'],
    ['apps', 'statefulsets'],
    ['apps', 'daemonsets'],
    ['batch', 'jobs'],
    ['', 'replicationcontrollers'],
  ])('%s/%s: an enforce violation is a warning', async (group, plural) => {
    const p = plugin({ namespaces: [ns('a', { [`${P}/enforce`]: 'restricted' })] });
    const a = attrs({ resource: [group, plural], object: deployment(plainSpec()) });
    await p.validate(a);
    expect(a.warnings).toEqual([`would violate PodSecurity "restricted:latest": ${RESTRICTED_DETAIL}`]);
    expect(a.annotations).toEqual({});
  });

  it('cronjobs: the job template; podtemplates: the template; audit annotated', async () => {
    const p = plugin({ namespaces: [ns('a', { [`${P}/audit`]: 'baseline' })] });
    const spec: PodSpec = { hostNetwork: true, containers: [{ name: 'c' }] };
    const cron: ApiObject = {
      metadata: { name: 'cj', namespace: 'a' },
      spec: { schedule: '* * * * *', jobTemplate: { spec: { template: { spec } } } },
    };
    const a = attrs({ resource: ['batch', 'cronjobs'], object: cron });
    await p.validate(a);
    expect(a.warnings).toEqual([]);
    expect(a.annotations).toEqual({
      [`${P}/audit-violations`]: 'would violate PodSecurity "baseline:latest": host namespaces (hostNetwork=true)',
    });
    const t = attrs({
      resource: ['', 'podtemplates'],
      object: { metadata: { name: 't', namespace: 'a' }, template: { spec } },
    });
    await p.validate(t);
    expect(Object.keys(t.annotations)).toEqual([`${P}/audit-violations`]);
  });

  it('other resources and workload subresources are not evaluated', async () => {
    const p = plugin({ namespaces: [ns('a', { [`${P}/enforce`]: 'restricted' })] });
    const scale = attrs({ resource: ['apps', 'deployments'], object: deployment(plainSpec()), subresource: 'scale' });
    await p.validate(scale);
    const cm = attrs({ resource: ['', 'configmaps'], object: { metadata: { name: 'c', namespace: 'a' } } });
    await p.validate(cm);
    expect([...scale.warnings, ...cm.warnings]).toEqual([]);
  });
});

describe('exemptions from the configuration', () => {
  const config = parsePodSecurityConfig({
    apiVersion: 'pod-security.admission.config.svc.io/v1',
    kind: 'PodSecurityConfiguration',
    defaults: { enforce: 'restricted' },
    exemptions: { usernames: ['bob'], namespaces: ['free'], runtimeClasses: ['kata'] },
  });
  const p = plugin({ namespaces: [ns('a'), ns('free')], config });

  it('the defaults apply to unlabelled namespaces', async () => {
    await expect(p.validate(attrs({ resource: ['', 'pods'], object: pod('x', 'a') }))).rejects.toThrow(
      /violates PodSecurity "restricted:latest"/,
    );
  });

  it.each([
    ['namespace', attrs({ resource: ['', 'pods'], object: pod('x', 'free') })],
    ['user', attrs({ resource: ['', 'pods'], object: pod('x', 'a'), user: 'bob' })],
    [
      'runtimeClass',
      attrs({
        resource: ['', 'pods'],
        object: pod('x', 'a', { runtimeClassName: 'kata', containers: [{ name: 'c' }] }),
      }),
    ],
  ])('exempt by %s', async (why, a) => {
    await p.validate(a);
    expect(a.annotations).toEqual({ [`${P}/exempt`]: why });
  });

  it('an exempt namespace that labels a policy is warned', async () => {
    const a = attrs({
      resource: ['', 'namespaces'],
      object: ns('free', { [`${P}/audit`]: 'baseline', [`${P}/warn`]: 'baseline' }),
    });
    await p.validate(a);
    expect(a.warnings).toEqual([
      'namespace "free" is exempt from Pod Security, and the policy (audit=baseline:latest, warn=baseline:latest) will be ignored',
    ]);
  });

  it('bad configurations are refused with every bad field', () => {
    const bad = (c: object) => () =>
      parsePodSecurityConfig({
        apiVersion: 'pod-security.admission.config.svc.io/v1',
        kind: 'PodSecurityConfiguration',
        ...c,
      });
    expect(bad({ defaults: { enforce: 'strict', 'warn-version': 'v2' } })).toThrow(ConfigurationError);
    expect(bad({ defaults: { enforce: 'strict', 'warn-version': 'v2' } })).toThrow(
      'PodSecurity: defaults.enforce: Invalid value: "strict": must be one of privileged, baseline, restricted, defaults.warn-version: Invalid value: "v2": must be "latest" or "v1.x"',
    );
    expect(bad({ exemptions: { namespaces: ['Bad_NS', 'ok', 'ok'], usernames: [''] } })).toThrow(
      /exemptions\.namespaces\[0\]: Invalid value: "Bad_NS".*exemptions\.namespaces\[2\]: Duplicate value: "ok".*exemptions\.usernames\[0\]: Invalid value: "": username must not be empty/,
    );
    expect(() => parsePodSecurityConfig({ defaults: {} })).toThrow(/expected kind PodSecurityConfiguration/);
  });
});

describe('namespaces', () => {
  it('labels are validated on create (422) and on update when they change', async () => {
    const p = plugin({ namespaces: [] });
    const create = attrs({ resource: ['', 'namespaces'], object: ns('n', { [`${P}/enforce-version`]: 'v1.x' }) });
    expect(await rejection(p.validate(create))).toEqual({
      code: 422,
      reason: 'Invalid',
      message: `Namespace "n" is invalid: metadata.labels[${P}/enforce-version]: Invalid value: "v1.x": must be "latest" or "v1.x"`,
    });
    // Unchanged bad labels do not block other updates.
    const old = ns('n', { [`${P}/warn`]: 'bogus' });
    await p.validate(
      attrs({
        resource: ['', 'namespaces'],
        operation: 'UPDATE',
        object: ns('n', { [`${P}/warn`]: 'bogus', x: 'y' }),
        oldObject: old,
      }),
    );
    await expect(
      p.validate(
        attrs({
          resource: ['', 'namespaces'],
          operation: 'UPDATE',
          object: ns('n', { [`${P}/warn`]: 'worse' }),
          oldObject: old,
        }),
      ),
    ).rejects.toThrow(/is invalid/);
  });

  it('raising the enforce level warns about the existing pods that violate it', async () => {
    const owned = (name: string, uid: string): Pod => ({
      ...pod(name, 'n'),
      metadata: {
        name,
        namespace: 'n',
        ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs', uid, controller: true }],
      },
    });
    const pods = [
      pod('solo', 'n', { hostNetwork: true, containers: [{ name: 'c' }] }),
      owned('rs-b', 'u1'),
      owned('rs-a', 'u1'),
      owned('rs-c', 'u1'),
      pod('other', 'm'),
    ];
    const p = plugin({ namespaces: [], pods });
    const a = attrs({
      resource: ['', 'namespaces'],
      operation: 'UPDATE',
      object: ns('n', { [`${P}/enforce`]: 'restricted' }),
      oldObject: ns('n'),
    });
    await p.validate(a);
    expect(a.warnings).toEqual([
      'existing pods in namespace "n" violate the new PodSecurity enforce level "restricted:latest"',
      'rs-a (and 2 other pods): allowPrivilegeEscalation != false, unrestricted capabilities, runAsNonRoot != true, seccompProfile',
      'solo: host namespaces, allowPrivilegeEscalation != false, unrestricted capabilities, runAsNonRoot != true, seccompProfile',
    ]);
  });

  it('lowering, keeping or removing the enforce level checks nothing', async () => {
    const pods = [pod('x', 'n', { hostNetwork: true, containers: [{ name: 'c' }] })];
    const p = plugin({ namespaces: [], pods });
    const update = (from: Record<string, string>, to: Record<string, string>) => {
      const a = attrs({
        resource: ['', 'namespaces'],
        operation: 'UPDATE',
        object: ns('n', to),
        oldObject: ns('n', from),
      });
      return p.validate(a).then(() => a.warnings);
    };
    expect(await update({ [`${P}/enforce`]: 'restricted' }, { [`${P}/enforce`]: 'baseline' })).toEqual([]);
    expect(
      await update({ [`${P}/enforce`]: 'baseline' }, { [`${P}/enforce`]: 'baseline', [`${P}/warn`]: 'restricted' }),
    ).toEqual([]);
    expect(await update({ [`${P}/enforce`]: 'baseline' }, {})).toEqual([]);
    // A new version at the same level is checked again.
    expect(
      await update(
        { [`${P}/enforce`]: 'baseline' },
        { [`${P}/enforce`]: 'baseline', [`${P}/enforce-version`]: 'v1.29' },
      ),
    ).toEqual([
      'existing pods in namespace "n" violate the new PodSecurity enforce level "baseline:v1.29"',
      'x: host namespaces',
    ]);
  });

  it('checks at most the configured number of pods', async () => {
    const pods = ['a', 'b', 'c'].map((n) => pod(n, 'n'));
    const p = new PodSecurity({
      config: DEFAULT_POD_SECURITY_CONFIG,
      getNamespace: () => Promise.resolve(undefined),
      listPods: () => Promise.resolve(pods),
      maxPodsToCheck: 2,
    });
    const a = attrs({
      resource: ['', 'namespaces'],
      operation: 'UPDATE',
      object: ns('n', { [`${P}/enforce`]: 'restricted' }),
      oldObject: ns('n'),
    });
    await p.validate(a);
    expect(a.warnings.slice(0, 2)).toEqual([
      'new PodSecurity enforce level only checked against the first 2 of 3 existing pods',
      'existing pods in namespace "n" violate the new PodSecurity enforce level "restricted:latest"',
    ]);
    expect(a.warnings[2]).toMatch(/^a \(and 1 other pod\): /);
  });
});
