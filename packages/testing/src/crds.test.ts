import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { useNaming } from '@svc/api';
import { readCrdFiles, type CrdManifest } from './crds.js';
import { inServerNaming } from './crd-naming.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-crds-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
  useNaming('svc');
});

async function file(name: string, text: string): Promise<string> {
  const p = join(dir, name);
  await writeFile(p, text);
  return p;
}

const crdYaml = (plural: string): string => `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: ${plural}.example.com
spec:
  group: example.com
  scope: Namespaced
  names: { plural: ${plural}, kind: K${plural} }
  versions: [{ name: v1, served: true, storage: true }]
`;

describe('readCrdFiles', () => {
  it('reads every document of every file in order, skipping empty ones', async () => {
    const a = await file('a.yaml', `---\n${crdYaml('widgets')}---\n# nothing here\n---\n${crdYaml('gadgets')}`);
    const b = await file('b.json', JSON.stringify({ ...YAMLish('sprockets') }));
    const crds = await readCrdFiles([a, b]);
    expect(crds.map((c) => c.metadata.name)).toEqual([
      'widgets.example.com',
      'gadgets.example.com',
      'sprockets.example.com',
    ]);
    expect(crds[0]?.spec.versions).toEqual([{ name: 'v1', served: true, storage: true }]);
  });

  it('refuses other kinds and broken YAML, naming the file and document', async () => {
    const other = await file('other.yaml', `${crdYaml('widgets')}---\napiVersion: v1\nkind: ConfigMap\n`);
    await expect(readCrdFiles([other])).rejects.toThrow(/other\.yaml: document 2 is a ConfigMap/);
    const broken = await file('broken.yaml', 'kind: [\n');
    await expect(readCrdFiles([broken])).rejects.toThrow(/broken\.yaml: document 1/);
  });
});

describe('inServerNaming', () => {
  const crd = { apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition' } as CrdManifest;
  it("spells the CRD's apiVersion in the naming in use", () => {
    useNaming('svc');
    expect(inServerNaming(crd).apiVersion).toBe('apiextensions.svc.io/v1');
    useNaming('kubernetes');
    expect(inServerNaming({ ...crd, apiVersion: 'apiextensions.svc.io/v1' }).apiVersion).toBe(
      'apiextensions.k8s.io/v1',
    );
    expect(inServerNaming({ ...crd, apiVersion: 'example.com/v1' }).apiVersion).toBe('example.com/v1');
  });

  it("spells the schemas' vendor extensions in the naming in use; property names stay as written", () => {
    useNaming('svc');
    const schema = {
      type: 'object',
      'x-kubernetes-preserve-unknown-fields': true,
      properties: {
        'x-kubernetes-odd-name': { type: 'string' },
        list: {
          type: 'array',
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['name'],
          items: { type: 'object', 'x-kubernetes-embedded-resource': true },
        },
        either: { anyOf: [{ type: 'integer' }, { type: 'string' }], 'x-kubernetes-int-or-string': true },
        m: { type: 'object', additionalProperties: { type: 'object', 'x-kubernetes-map-type': 'atomic' } },
      },
      'x-kubernetes-validations': [{ rule: 'self.x-kubernetes-x == 1' }],
    };
    const k8s: CrdManifest = {
      ...crd,
      metadata: {},
      spec: {
        group: 'g',
        names: { plural: 'ws', kind: 'W' },
        versions: [{ name: 'v1', schema: { openAPIV3Schema: schema } }],
      },
    } as CrdManifest;
    const got = inServerNaming(k8s).spec.versions[0] as unknown as { schema: { openAPIV3Schema: unknown } };
    expect(got.schema.openAPIV3Schema).toEqual({
      type: 'object',
      'x-svc-preserve-unknown-fields': true,
      properties: {
        'x-kubernetes-odd-name': { type: 'string' },
        list: {
          type: 'array',
          'x-svc-list-type': 'map',
          'x-svc-list-map-keys': ['name'],
          items: { type: 'object', 'x-svc-embedded-resource': true },
        },
        either: { anyOf: [{ type: 'integer' }, { type: 'string' }], 'x-svc-int-or-string': true },
        m: { type: 'object', additionalProperties: { type: 'object', 'x-svc-map-type': 'atomic' } },
      },
      'x-svc-validations': [{ rule: 'self.x-kubernetes-x == 1' }],
    });
    useNaming('kubernetes');
    expect(inServerNaming(inServerNaming(k8s)).spec.versions[0]).toEqual(k8s.spec.versions[0]);
  });
});

function YAMLish(plural: string): CrdManifest {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.example.com` },
    spec: { group: 'example.com', names: { plural, kind: 'S' }, versions: [{ name: 'v1' }] },
  };
}
