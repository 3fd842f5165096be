// The pure parts of admission webhooks: rule matching (scope, wildcards, subresources),
// equivalent resources, Kubernetes' checks of an AdmissionReview answer, and denial statuses.
import { builtinCatalog, group, type Catalog, type ResourceType } from '@svc/api';
import { reviewVersionFor, verifyResponse } from './admission-review.js';
import { rejectionStatus } from './errors.js';
import { equivalentResources, isExemptConfigurationResource, ruleMatches, type RuleInput } from './rules.js';

const pods = (o: Partial<RuleInput> = {}): RuleInput => ({
  operation: 'CREATE',
  resource: { group: '', version: 'v1', resource: 'pods' },
  subresource: '',
  namespace: 'default',
  ...o,
});
const rule = (o: Record<string, unknown> = {}) => ({
  operations: ['CREATE'],
  apiGroups: [''],
  apiVersions: ['v1'],
  resources: ['pods'],
  ...o,
});

describe('rules', () => {
  it('match operations, groups, versions and resources exactly or by *', () => {
    expect(ruleMatches(rule(), pods())).toBe(true);
    expect(ruleMatches(rule(), pods({ operation: 'UPDATE' }))).toBe(false);
    expect(ruleMatches(rule({ operations: ['*'] }), pods({ operation: 'DELETE' }))).toBe(true);
    expect(ruleMatches(rule({ apiGroups: ['apps'] }), pods())).toBe(false);
    expect(ruleMatches(rule({ apiGroups: ['*'], apiVersions: ['*'] }), pods())).toBe(true);
  });

  it('match subresources only when named: pods/status, pods/*, */status, */*', () => {
    const status = pods({ subresource: 'status', operation: 'UPDATE' });
    const any = { operations: ['*'] };
    expect(ruleMatches(rule(any), status)).toBe(false);
    expect(ruleMatches(rule({ ...any, resources: ['pods/status'] }), status)).toBe(true);
    expect(ruleMatches(rule({ ...any, resources: ['pods/*'] }), status)).toBe(true);
    expect(ruleMatches(rule({ ...any, resources: ['*/status'] }), status)).toBe(true);
    expect(ruleMatches(rule({ ...any, resources: ['*/*'] }), status)).toBe(true);
    expect(ruleMatches(rule({ ...any, resources: ['*'] }), status)).toBe(false);
    expect(ruleMatches(rule({ ...any, resources: ['*/*'] }), pods())).toBe(true);
  });

  it('match scope: namespaces themselves are cluster scoped', () => {
    const namespace = pods({ resource: { group: '', version: 'v1', resource: 'namespaces' }, namespace: 'x' });
    const nodes = pods({ resource: { group: '', version: 'v1', resource: 'nodes' }, namespace: '' });
    const cluster = rule({ resources: ['*'], scope: 'Cluster' });
    const namespaced = rule({ resources: ['*'], scope: 'Namespaced' });
    expect(ruleMatches(cluster, namespace)).toBe(true);
    expect(ruleMatches(cluster, nodes)).toBe(true);
    expect(ruleMatches(cluster, pods())).toBe(false);
    expect(ruleMatches(namespaced, namespace)).toBe(false);
    expect(ruleMatches(namespaced, pods())).toBe(true);
  });
});

describe('equivalent resources and exemptions', () => {
  let catalog: Catalog;
  const lookup = (g: string, v: string, p: string): ResourceType => {
    const r = catalog.lookup(g, v, p);
    if (!r) throw new Error(`${g}/${v}/${p} not in the catalog`);
    return r;
  };
  beforeAll(() => {
    catalog = builtinCatalog();
  });

  it('finds the types served from the same storage (events in both APIs)', () => {
    const core = lookup('', 'v1', 'events');
    const events = lookup(group('events'), 'v1', 'events');
    expect(equivalentResources(catalog, core, '')).toEqual([core, events]);
    expect(equivalentResources(catalog, events, '')).toEqual([events, core]);
    expect(equivalentResources(catalog, lookup('', 'v1', 'pods'), '')).toHaveLength(1);
  });

  it('never sends the objects that configure admission', () => {
    for (const plural of ['mutatingwebhookconfigurations', 'validatingwebhookconfigurations'])
      expect(isExemptConfigurationResource(lookup(group('admissionregistration'), 'v1', plural))).toBe(true);
    expect(isExemptConfigurationResource(lookup('', 'v1', 'configmaps'))).toBe(false);
  });
});

describe('AdmissionReview answers', () => {
  const uid = '0b7a7e3e-52d4-4e43-9d6f-2d7b8d2f0a11';
  const v1 = (response: Record<string, unknown>, o: Record<string, unknown> = {}) => ({
    apiVersion: `${group('admission')}/v1`,
    kind: 'AdmissionReview',
    response: { uid, ...response },
    ...o,
  });
  const verify = (doc: unknown, mutating = true) => verifyResponse(doc, { version: 'v1', uid, mutating });
  const patch = Buffer.from('[]').toString('base64');

  it('picks the first review version this server speaks', () => {
    expect(reviewVersionFor(['v2', 'v1beta1', 'v1'])).toBe('v1beta1');
    expect(reviewVersionFor(['v2'])).toBeUndefined();
  });

  it("refuses answers Kubernetes refuses, with Kubernetes' reasons", () => {
    expect(() => verify({ apiVersion: `${group('admission')}/v1`, kind: 'AdmissionReview' })).toThrow(
      'webhook response was absent',
    );
    expect(() => verify(v1({ uid: 'other', allowed: true }))).toThrow(`expected response.uid="${uid}", got "other"`);
    expect(() => verify(v1({ allowed: true }, { kind: 'Other' }))).toThrow(
      `expected webhook response of ${group('admission')}/v1, Kind=AdmissionReview, got ${group('admission')}/v1, Kind=Other`,
    );
    expect(() => verify(v1({ allowed: true, patch }))).toThrow(
      'webhook returned response.patch but not response.patchType',
    );
    expect(() => verify(v1({ allowed: true, patchType: 'JSONPatch' }))).toThrow(
      'webhook returned response.patchType but not response.patch',
    );
    expect(() => verify(v1({ allowed: true, patch, patchType: 'JSONPatch' }), false)).toThrow(
      'validating webhook may not return response.patch',
    );
    expect(() => verify(v1({ allowed: true, patchType: 'JSONPatch' }), false)).toThrow(
      'validating webhook may not return response.patchType',
    );
  });

  it('accepts the Kubernetes spelling of the group and reads warnings and audit annotations', () => {
    const r = verify(
      v1({ allowed: true, warnings: ['w'], auditAnnotations: { k: 'v' } }, { apiVersion: 'admission.k8s.io/v1' }),
    );
    expect(r).toEqual({ allowed: true, warnings: ['w'], auditAnnotations: { k: 'v' } });
  });

  it('checks neither uid nor kind of a v1beta1 answer; its patch is a JSONPatch', () => {
    const r = verifyResponse({ response: { allowed: true, patch } }, { version: 'v1beta1', uid, mutating: true });
    expect(r).toMatchObject({ allowed: true, patch: '[]', patchType: 'JSONPatch' });
  });
});

describe('denials', () => {
  it("are the webhook's status with a code of at least 400 and Kubernetes' message", () => {
    expect(rejectionStatus('w.example.com', { code: 403, reason: 'Forbidden', message: 'no' }).status).toMatchObject({
      code: 403,
      reason: 'Forbidden',
      status: 'Failure',
      message: 'admission webhook "w.example.com" denied the request: no',
    });
    expect(rejectionStatus('w.example.com', { code: 200, reason: 'Because' }).status).toMatchObject({
      code: 400,
      message: 'admission webhook "w.example.com" denied the request: Because',
    });
    expect(rejectionStatus('w.example.com', undefined).status).toMatchObject({
      code: 400,
      message: 'admission webhook "w.example.com" denied the request without explanation',
    });
  });
});
