// Webhook configuration types and strategy without a server: Kubernetes' v1 defaults, the
// generation, the rules an update may keep from the stored object, and the Protobuf field
// numbers of generated.proto (RuleWithOperations inlines Rule at field 2).
import { builtinCatalog, fieldErrorMessage, group, type ApiObject, type FieldError, type ObjectSchema } from '@svc/api';
import { decodeMessage, encodeMessage } from '@svc/machinery';
import type { StrategyContext } from '../strategy.js';
import { webhookConfigurationStrategy } from './webhook-configuration.js';

const ctx: StrategyContext = { subresource: '' };
const mutating = webhookConfigurationStrategy('mutating');
const validating = webhookConfigurationStrategy('validating');

function config(webhooks: Array<Record<string, unknown>>): ApiObject {
  return {
    apiVersion: `${group('admissionregistration')}/v1`,
    kind: 'MutatingWebhookConfiguration',
    metadata: { name: 'c' },
    webhooks,
  };
}

const hook = (over: Record<string, unknown> = {}): Record<string, unknown> => ({
  name: 'hook.example.com',
  clientConfig: { service: { namespace: 'ns', name: 'svc' } },
  rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }],
  sideEffects: 'None',
  admissionReviewVersions: ['v1'],
  ...over,
});

const messages = async (errs: FieldError[] | Promise<FieldError[]>): Promise<string[]> =>
  (await errs).map(fieldErrorMessage);

describe('defaults and generation', () => {
  it("sets Kubernetes' v1 defaults on create and update", () => {
    const obj = config([hook()]);
    mutating.prepareForCreate?.(obj, ctx);
    expect(obj.metadata.generation).toBe(1);
    expect((obj.webhooks as unknown[])[0]).toEqual({
      ...hook(),
      clientConfig: { service: { namespace: 'ns', name: 'svc', port: 443 } },
      rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'], scope: '*' }],
      failurePolicy: 'Fail',
      matchPolicy: 'Equivalent',
      namespaceSelector: {},
      objectSelector: {},
      timeoutSeconds: 10,
      reinvocationPolicy: 'Never',
    });
    const v = config([hook()]);
    validating.prepareForCreate?.(v, ctx);
    expect((v.webhooks as Array<Record<string, unknown>>)[0]?.reinvocationPolicy).toBeUndefined();
  });

  it('moves the generation only when the webhooks change', () => {
    const old = config([hook()]);
    mutating.prepareForCreate?.(old, ctx);
    const same = structuredClone(old);
    same.metadata.labels = { a: 'b' };
    mutating.prepareForUpdate?.(same, old, ctx);
    expect(same.metadata.generation).toBe(1);
    const changed = config([hook({ timeoutSeconds: 5 })]);
    changed.metadata.generation = 1;
    mutating.prepareForUpdate?.(changed, old, ctx);
    expect(changed.metadata.generation).toBe(2);
  });
});

describe('validation on update', () => {
  it('keeps side effects, unknown review versions and duplicate names an existing object already had', async () => {
    const legacy = config([
      hook({ sideEffects: 'Unknown', admissionReviewVersions: ['v0'] }),
      hook({ sideEffects: 'Some', admissionReviewVersions: ['v0'] }),
    ]);
    expect(await messages(mutating.validate?.(legacy, ctx) ?? [])).toEqual([
      'webhooks[0].sideEffects: Unsupported value: "Unknown": supported values: "None", "NoneOnDryRun"',
      'webhooks[0].admissionReviewVersions: Invalid value: ["v0"]: must include at least one of v1, v1beta1',
      'webhooks[1].sideEffects: Unsupported value: "Some": supported values: "None", "NoneOnDryRun"',
      'webhooks[1].admissionReviewVersions: Invalid value: ["v0"]: must include at least one of v1, v1beta1',
      'webhooks[1].name: Duplicate value: "hook.example.com"',
    ]);
    expect(await messages(mutating.validateUpdate?.(structuredClone(legacy), legacy, ctx) ?? [])).toEqual([]);
    // Once the stored object is clean, the rules apply again.
    const clean = config([hook()]);
    expect(await messages(mutating.validateUpdate?.(legacy, clean, ctx) ?? [])).toHaveLength(5);
  });

  it('compiles matchConditions only when they changed', async () => {
    const bad = config([hook({ matchConditions: [{ name: 'm', expression: 'request.nope' }] })]);
    const errs = await messages(validating.validate?.(bad, ctx) ?? []);
    expect(errs).toHaveLength(1);
    expect(errs[0]).toMatch(
      /^webhooks\[0\]\.matchConditions\[0\]\.expression: Invalid value: "request\.nope": compilation failed: ERROR: <input>:1:\d+: undefined field 'nope'/,
    );
    expect(await messages(validating.validateUpdate?.(structuredClone(bad), bad, ctx) ?? [])).toEqual([]);
  });
});

describe('Protobuf', () => {
  const schema = (kind: string): ObjectSchema => {
    const r = builtinCatalog().byKind(group('admissionregistration'), 'v1', kind);
    if (!r) throw new Error(`${kind} is not in the catalog`);
    return r.schema as ObjectSchema;
  };

  it('decodes the field numbers of generated.proto', () => {
    // MutatingWebhookConfiguration{webhooks(2): MutatingWebhook{name(1): "a", rules(3): RuleWithOperations{
    //   operations(1): "CREATE", rule(2): Rule{apiGroups(1): ""}}, reinvocationPolicy(10): "IfNeeded"}}
    const rule = [0x0a, 6, ...Buffer.from('CREATE'), 0x12, 2, 0x0a, 0];
    const policy = [0x52, 8, ...Buffer.from('IfNeeded')];
    const webhookBytes = [0x0a, 1, 0x61, 0x1a, rule.length, ...rule, ...policy];
    const bytes = Uint8Array.from([0x12, webhookBytes.length, ...webhookBytes]);
    expect(decodeMessage(bytes, schema('MutatingWebhookConfiguration'))).toEqual({
      webhooks: [{ name: 'a', rules: [{ operations: ['CREATE'], apiGroups: [''] }], reinvocationPolicy: 'IfNeeded' }],
    });
  });

  it('round-trips a whole configuration', () => {
    for (const kind of ['MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration']) {
      const obj = config([
        hook({
          clientConfig: { url: 'https://x.example.com/hook', caBundle: Buffer.from('ca').toString('base64') },
          failurePolicy: 'Ignore',
          matchPolicy: 'Exact',
          namespaceSelector: { matchLabels: { a: 'b' } },
          objectSelector: { matchExpressions: [{ key: 'k', operator: 'Exists' }] },
          timeoutSeconds: 3,
          matchConditions: [{ name: 'm', expression: 'true' }],
          ...(kind.startsWith('Mutating') ? { reinvocationPolicy: 'IfNeeded' } : {}),
        }),
      ]);
      const { apiVersion: _a, kind: _k, ...body } = obj;
      const s = schema(kind);
      expect(decodeMessage(encodeMessage(body, s), s)).toEqual(body);
    }
  });
});
