import { gatewayApiCrdDir } from '@svc/testing';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { fieldErrorMessage, useNaming } from '@svc/api';
import { checkSchema } from '@svc/machinery';
import {
  applyDefaults,
  celErrors,
  crdSchemaErrors,
  evaluateRules,
  structuralErrors,
  toDslSchema,
  validateCustomResource,
  validateValue,
  type JSONSchemaProps,
} from './index.js';

/** The Gateway API v1.2.1 CRDs (standard channel), as shipped; `SVC_GATEWAY_API_CRDS` overrides the directory. */
const DIR = gatewayApiCrdDir();

interface Crd {
  metadata: { name: string };
  spec: {
    versions: { name: string; schema: { openAPIV3Schema: JSONSchemaProps }; subresources?: { status?: object } }[];
  };
}

const crds: Crd[] = readdirSync(DIR)
  .filter((f) => f.endsWith('.yaml'))
  .sort()
  .map((f) => parse(readFileSync(join(DIR, f), 'utf8')) as Crd);

function schemaOf(name: string, version: string): JSONSchemaProps {
  const crd = crds.find((c) => c.metadata.name === name);
  const v = crd?.spec.versions.find((x) => x.name === version);
  if (!v) throw new Error(`no ${name} ${version}`);
  return v.schema.openAPIV3Schema;
}

beforeAll(() => useNaming('kubernetes'));
afterAll(() => useNaming('svc'));

it('reads all four CRDs', () => {
  expect(crds.map((c) => c.metadata.name)).toEqual([
    'gatewayclasses.gateway.networking.k8s.io',
    'gateways.gateway.networking.k8s.io',
    'httproutes.gateway.networking.k8s.io',
    'referencegrants.gateway.networking.k8s.io',
  ]);
});

const versions = crds.flatMap((c) => c.spec.versions.map((v, i) => ({ crd: c.metadata.name, version: v.name, i, v })));

describe.each(versions)('$crd $version', ({ i, v }) => {
  const schema = v.schema.openAPIV3Schema;
  const path = `spec.versions[${i}].schema.openAPIV3Schema`;

  it('is structural, with valid defaults, and every rule compiles', () => {
    expect(structuralErrors(schema, path, { statusSubresource: !!v.subresources?.status })).toEqual([]);
    expect(celErrors(schema, path)).toEqual([]);
    expect(crdSchemaErrors(schema, path, { statusSubresource: !!v.subresources?.status })).toEqual([]);
  });

  it('converts to a DSL schema with its list markers', () => {
    const dsl = toDslSchema(schema);
    expect(Object.keys(dsl.properties).slice(0, 3)).toEqual(['apiVersion', 'kind', 'metadata']);
    expect(checkSchema({ apiVersion: 'x', kind: 'y', metadata: { name: 'n' }, spec: {} }, dsl).errors).toEqual([]);
  });
});

/** Defaults, then the whole validation, as the store runs it. */
function validate(schema: JSONSchemaProps, obj: Record<string, unknown>, old?: Record<string, unknown>): string[] {
  applyDefaults(schema, obj);
  if (old) applyDefaults(schema, old);
  return validateCustomResource(schema, { value: obj, old }).map(fieldErrorMessage);
}

describe('HTTPRoute v1', () => {
  const schema = () => schemaOf('httproutes.gateway.networking.k8s.io', 'v1');
  const route = (rule: Record<string, unknown>) => ({
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'HTTPRoute',
    metadata: { name: 'r', namespace: 'default' },
    spec: { parentRefs: [{ name: 'gw' }], hostnames: ['example.com'], rules: [rule] },
  });

  it('accepts a valid route and fills in its defaults', () => {
    const obj = route({
      matches: [{ path: { type: 'PathPrefix', value: '/foo' } }],
      backendRefs: [{ name: 'svc', port: 80 }],
    });
    expect(validate(schema(), obj)).toEqual([]);
    expect(obj.spec.parentRefs).toEqual([{ name: 'gw', group: 'gateway.networking.k8s.io', kind: 'Gateway' }]);
    expect(obj.spec.rules[0]).toMatchObject({
      backendRefs: [{ name: 'svc', port: 80, group: '', kind: 'Service', weight: 1 }],
    });
  });

  it('defaults the matches of a rule without any', () => {
    const obj = route({ backendRefs: [{ name: 'svc', port: 80 }] });
    expect(validate(schema(), obj)).toEqual([]);
    expect(obj.spec.rules[0]).toMatchObject({ matches: [{ path: { type: 'PathPrefix', value: '/' } }] });
  });

  it('rejects a path that is not absolute', () => {
    const obj = route({ matches: [{ path: { type: 'PathPrefix', value: 'foo' } }] });
    expect(validate(schema(), obj)).toEqual([
      "spec.rules[0].matches[0].path: Invalid value: \"object\": value must be an absolute path and start with '/' when type one of ['Exact', 'PathPrefix']",
    ]);
  });

  it('rejects a Service backend without a port', () => {
    expect(validate(schema(), route({ backendRefs: [{ name: 'svc' }] }))).toEqual([
      'spec.rules[0].backendRefs[0]: Invalid value: "object": Must have port for Service reference',
    ]);
  });

  it('rejects a redirect together with a rewrite', () => {
    const obj = route({
      filters: [
        { type: 'RequestRedirect', requestRedirect: { scheme: 'https' } },
        { type: 'URLRewrite', urlRewrite: { hostname: 'x.example.com' } },
      ],
    });
    expect(validate(schema(), obj)).toEqual([
      'spec.rules[0].filters: Invalid value: "array": May specify either httpRouteFilterRequestRedirect or httpRouteFilterRequestRewrite, but not both',
    ]);
  });

  it('rejects a filter whose type does not match its field', () => {
    const obj = route({ filters: [{ type: 'RequestRedirect', urlRewrite: { hostname: 'x' } }] });
    expect(validate(schema(), obj)).toEqual([
      'spec.rules[0].filters[0]: Invalid value: "object": filter.requestRedirect must be specified for RequestRedirect filter.type',
      'spec.rules[0].filters[0]: Invalid value: "object": filter.urlRewrite must be nil if the filter.type is not URLRewrite',
    ]);
  });

  it('reports schema errors and then leaves the rules unchecked', () => {
    const obj = route({ matches: [{ path: { type: 'Regex2', value: 'x' } }] });
    expect(validate(schema(), obj)).toEqual([
      'spec.rules[0].matches[0].path.type: Unsupported value: "Regex2": supported values: "Exact", "PathPrefix", "RegularExpression"',
      '<nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation',
    ]);
  });

  it('rejects a hostname that does not match the pattern', () => {
    const obj = route({});
    obj.spec.hostnames = ['Bad_Host'];
    expect(validateValue(schema(), applyDefaults(schema(), obj)).map(fieldErrorMessage)).toEqual([
      'spec.hostnames[0]: Invalid value: "Bad_Host": spec.hostnames[0] in body should match \'^(\\*\\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$\'',
    ]);
  });
});

describe('Gateway v1', () => {
  const schema = () => schemaOf('gateways.gateway.networking.k8s.io', 'v1');
  const gateway = (listeners: Record<string, unknown>[]) => ({
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'Gateway',
    metadata: { name: 'g', namespace: 'default' },
    spec: { gatewayClassName: 'example', listeners },
  });

  it('accepts a valid gateway', () => {
    const obj = gateway([{ name: 'http', protocol: 'HTTP', port: 80 }]);
    expect(validate(schema(), obj)).toEqual([]);
    expect(obj.spec.listeners[0]).toMatchObject({ allowedRoutes: { namespaces: { from: 'Same' } } });
  });

  it('rejects listeners with the same name', () => {
    const obj = gateway([
      { name: 'http', protocol: 'HTTP', port: 80 },
      { name: 'http', protocol: 'HTTP', port: 8080 },
    ]);
    expect(validate(schema(), obj)).toEqual([
      'spec.listeners[1]: Duplicate value: {"name":"http"}',
      'spec.listeners: Invalid value: "array": Listener name must be unique within the Gateway',
    ]);
  });

  it('rejects a hostname on a TCP listener', () => {
    const obj = gateway([{ name: 'tcp', protocol: 'TCP', port: 9000, hostname: 'example.com' }]);
    expect(validate(schema(), obj)).toEqual([
      "spec.listeners: Invalid value: \"array\": hostname must not be specified for protocols ['TCP', 'UDP']",
    ]);
  });
});

describe('GatewayClass v1', () => {
  const schema = () => schemaOf('gatewayclasses.gateway.networking.k8s.io', 'v1');
  const cls = (controllerName: string) => ({
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'GatewayClass',
    metadata: { name: 'c' },
    spec: { controllerName },
  });

  it('keeps controllerName immutable (a transition rule)', () => {
    expect(validate(schema(), cls('example.com/a'))).toEqual([]);
    expect(validate(schema(), cls('example.com/a'), cls('example.com/a'))).toEqual([]);
    expect(validate(schema(), cls('example.com/b'), cls('example.com/a'))).toEqual([
      'spec.controllerName: Invalid value: "string": Value is immutable',
    ]);
  });

  it('checks the controller name pattern (an Invalid error does not block the rules)', () => {
    expect(validate(schema(), cls('no-slash'))).toEqual([
      expect.stringMatching(
        /^spec\.controllerName: Invalid value: "no-slash": spec\.controllerName in body should match /,
      ),
    ]);
  });
});

describe('ReferenceGrant v1beta1', () => {
  it('accepts a valid grant and rejects a missing field', () => {
    const schema = schemaOf('referencegrants.gateway.networking.k8s.io', 'v1beta1');
    const grant = {
      apiVersion: 'gateway.networking.k8s.io/v1beta1',
      kind: 'ReferenceGrant',
      metadata: { name: 'g', namespace: 'default' },
      spec: {
        from: [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', namespace: 'other' }],
        to: [{ group: '', kind: 'Service' }],
      },
    };
    expect(validate(schema, grant)).toEqual([]);
    const missing = { ...grant, spec: { from: grant.spec.from } };
    // No rule in this CRD, so nothing is left unchecked.
    expect(validate(schema, missing)).toEqual(['spec.to: Required value']);
    expect(evaluateRules(schema, { value: grant })).toEqual([]);
  });
});
