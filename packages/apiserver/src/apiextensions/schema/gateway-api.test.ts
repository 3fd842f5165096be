import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { useNaming } from '@svc/api';
import { celErrors, crdSchemaErrors, structuralErrors, toDslSchema, type JSONSchemaProps } from './index.js';

const DIR = process.env.SVC_GATEWAY_API_CRDS ?? '/work/shared/testdata/crds/gateway-api-v1.2.1';

interface Crd {
  metadata: { name: string };
  spec: { versions: { name: string; schema: { openAPIV3Schema: JSONSchemaProps } }[] };
}

const crds: Crd[] = readdirSync(DIR)
  .filter((f) => f.endsWith('.yaml'))
  .map((f) => parse(readFileSync(join(DIR, f), 'utf8')) as Crd);

beforeAll(() => useNaming('kubernetes'));
afterAll(() => useNaming('svc'));

describe.each(
  crds.flatMap((c) => c.spec.versions.map((v) => [c.metadata.name, v.name, v.schema.openAPIV3Schema] as const)),
)('%s %s', (_crd, _version, schema) => {
  it('has no schema errors', () => {
    const t = Date.now();
    expect(structuralErrors(schema, 'spec.versions[0].schema.openAPIV3Schema')).toEqual([]);
    expect(celErrors(schema, 'spec.versions[0].schema.openAPIV3Schema')).toEqual([]);
    expect(crdSchemaErrors(schema, 'spec.versions[0].schema.openAPIV3Schema')).toEqual([]);
    expect(toDslSchema(schema).type).toBe('object');
    console.log(Date.now() - t);
  });
});
