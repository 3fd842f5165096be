// Stock kubectl with CustomResourceDefinitions, the server under `--naming=kubernetes` (kubectl
// names apiextensions.k8s.io and x-kubernetes-* itself): the Gateway API's own CRDs and a CRD of
// ours applied from YAML, custom resources with printer columns, -o wide, explain, scale,
// merge patches of the object and of its status, server-side apply conflicts, `get all`,
// bad input, and deleting the CRD.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import {
  crdManifest,
  startKubectlEnv,
  uniqueName,
  waitFor,
  type Json,
  type KubectlEnv,
  type KubectlResult,
  gatewayApiCrdDir,
} from '@svc/testing';

const GATEWAY_API = gatewayApiCrdDir();

let env: KubectlEnv;
let ns: string;

const k = (args: string[], stdin?: string): Promise<KubectlResult> => env.ok(args, { stdin });
const run = (args: string[], stdin?: string): Promise<KubectlResult> => env.run(args, { stdin });

const widgetCrd = crdManifest({
  group: 'shop.example.com',
  plural: 'widgets',
  kind: 'Widget',
  names: { shortNames: ['wd'], categories: ['all'] },
  versions: [
    {
      name: 'v1',
      schema: {
        type: 'object',
        description: 'A widget of the shop.',
        properties: {
          spec: {
            type: 'object',
            description: 'What the widget should be.',
            properties: {
              color: { type: 'string', enum: ['red', 'green', 'blue'], description: 'The colour of the widget.' },
              replicas: { type: 'integer', minimum: 0 },
              tags: {
                type: 'array',
                items: {
                  type: 'object',
                  required: ['name'],
                  properties: { name: { type: 'string' }, value: { type: 'string' } },
                },
                'x-kubernetes-list-type': 'map',
                'x-kubernetes-list-map-keys': ['name'],
              },
            },
          },
          status: { type: 'object', properties: { phase: { type: 'string' }, replicas: { type: 'integer' } } },
        },
      },
      subresources: {
        status: {},
        scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas' },
      },
      additionalPrinterColumns: [
        { name: 'Color', type: 'string', jsonPath: '.spec.color' },
        { name: 'Phase', type: 'string', jsonPath: '.status.phase', priority: 1 },
      ],
    },
  ],
  naming: 'kubernetes',
});

const widget = (name: string, spec: Json): Json => ({
  apiVersion: 'shop.example.com/v1',
  kind: 'Widget',
  metadata: { name, namespace: ns },
  spec,
});

beforeAll(async () => {
  env = await startKubectlEnv({ args: ['--naming=kubernetes'] });
  ns = uniqueName('kcrd');
  await k(['create', 'namespace', ns]);
  await k(['apply', '-f', await env.manifest(widgetCrd)]);
  await k(['wait', '--for=condition=Established', '--timeout=30s', 'crd/widgets.shop.example.com']);
});

afterAll(async () => {
  await env?.stop();
});

describe('the Gateway API CRDs', () => {
  it('apply, become Established, and serve their custom resources with printer columns', async () => {
    const files = readdirSync(GATEWAY_API).filter((f) => f.endsWith('.yaml'));
    expect(files.length).toBe(4);
    for (const f of files) await k(['apply', '--server-side', '-f', join(GATEWAY_API, f)]);
    await k(['wait', '--for=condition=Established', '--timeout=30s', 'crd/gatewayclasses.gateway.networking.k8s.io']);
    await k(['wait', '--for=condition=Established', '--timeout=30s', 'crd/httproutes.gateway.networking.k8s.io']);
    const gc = {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'GatewayClass',
      metadata: { name: 'example' },
      spec: { controllerName: 'example.com/gateway-controller' },
    };
    await waitFor(
      'GatewayClasses to be served',
      async () => (await run(['apply', '-f', await env.manifest(gc)])).code === 0,
    );
    const out = (await k(['get', 'gatewayclasses'])).stdout;
    expect(out.split('\n')[0]).toMatch(/^NAME\s+CONTROLLER\s+ACCEPTED\s+AGE/);
    expect(out).toMatch(/example\s+example\.com\/gateway-controller\s+Unknown/);
    // A CEL rule of the HTTPRoute schema refuses a path match without a leading slash.
    const route = {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'HTTPRoute',
      metadata: { name: 'bad', namespace: ns },
      spec: { rules: [{ matches: [{ path: { type: 'PathPrefix', value: 'no-slash' } }] }] },
    };
    const bad = await run(['apply', '-f', await env.manifest(route)]);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('value must be an absolute path and start with');
  });
});

describe('a CRD of our own', () => {
  it('prints its columns (no Age when it names columns), the priority-1 column only with -o wide', async () => {
    await k(['apply', '-f', await env.manifest(widget('w1', { color: 'red', replicas: 1 }))]);
    const out = (await k(['get', 'widgets', '-n', ns])).stdout;
    expect(out.split('\n')[0]).toMatch(/^NAME\s+COLOR\s*$/);
    expect(out).toMatch(/w1\s+red/);
    const wide = (await k(['get', 'wd', '-n', ns, '-o', 'wide'])).stdout;
    expect(wide.split('\n')[0]).toMatch(/^NAME\s+COLOR\s+PHASE\s*$/);
  });

  it('is explained from its published schema', async () => {
    const out = (await k(['explain', 'widgets.spec'])).stdout;
    expect(out).toContain('What the widget should be.');
    expect(out).toMatch(/color\s+<string>/);
    expect(out).toContain('The colour of the widget.');
  });

  it('scales, and takes merge patches of the object and of its status', async () => {
    await k(['apply', '-f', await env.manifest(widget('w2', { color: 'green', replicas: 1 }))]);
    await k(['scale', 'widget/w2', '-n', ns, '--replicas=3']);
    await k(['patch', 'widget', 'w2', '-n', ns, '--type', 'merge', '-p', '{"spec":{"color":"blue"}}']);
    await k([
      'patch',
      'widget',
      'w2',
      '-n',
      ns,
      '--subresource=status',
      '--type',
      'merge',
      '-p',
      '{"status":{"phase":"Ready","replicas":3}}',
    ]);
    const got = JSON.parse((await k(['get', 'widget', 'w2', '-n', ns, '-o', 'json'])).stdout) as Json;
    expect(got.spec).toEqual({ color: 'blue', replicas: 3 });
    expect(got.status).toEqual({ phase: 'Ready', replicas: 3 });
    expect((await k(['get', 'widget', 'w2', '-n', ns, '-o', 'wide'])).stdout).toMatch(/w2\s+blue\s+Ready/);
  });

  it('applies server-side with list-map merging, conflicts, and --force-conflicts', async () => {
    const file = await env.manifest(widget('w3', { color: 'red', tags: [{ name: 'a', value: '1' }] }));
    await k(['apply', '--server-side', '--field-manager=alice', '-f', file]);
    const bob = await env.manifest(widget('w3', { tags: [{ name: 'b', value: '2' }] }));
    await k(['apply', '--server-side', '--field-manager=bob', '-f', bob]);
    let got = JSON.parse((await k(['get', 'widget', 'w3', '-n', ns, '-o', 'json'])).stdout) as Json;
    expect(got.spec.tags).toEqual([
      { name: 'a', value: '1' },
      { name: 'b', value: '2' },
    ]);
    const carol = await env.manifest(widget('w3', { color: 'green' }));
    const conflict = await run(['apply', '--server-side', '--field-manager=carol', '-f', carol]);
    expect(conflict.code).not.toBe(0);
    expect(conflict.stderr).toContain('conflict');
    expect(conflict.stderr).toContain('.spec.color');
    await k(['apply', '--server-side', '--field-manager=carol', '--force-conflicts', '-f', carol]);
    got = JSON.parse((await k(['get', 'widget', 'w3', '-n', ns, '-o', 'json'])).stdout) as Json;
    expect(got.spec.color).toBe('green');
  });

  it('is part of `kubectl get all` through its category', async () => {
    const out = (await k(['get', 'all', '-n', ns])).stdout;
    expect(out).toContain('widget.shop.example.com/w1');
  });

  it('refuses an invalid object with the schema rule in the message', async () => {
    const bad = await run(['apply', '-f', await env.manifest(widget('bad', { color: 'pink' }))]);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('Unsupported value: "pink"');
  });

  it('when deleted, takes its custom resources with it', async () => {
    await k(['delete', 'crd', 'widgets.shop.example.com', '--timeout=60s']);
    const after = await run(['get', 'widgets', '-n', ns]);
    expect(after.code).not.toBe(0);
    // Which message depends on kubectl's discovery cache; either way the type is gone.
    expect(after.stderr).toMatch(/doesn't have a resource type "widgets"|could not find the requested resource/);
    await k(['apply', '-f', await env.manifest(widgetCrd)]);
    await k(['wait', '--for=condition=Established', '--timeout=30s', 'crd/widgets.shop.example.com']);
    await waitFor('widgets to be served again', async () => (await run(['get', 'widgets', '-n', ns])).code === 0);
    expect((await k(['get', 'widgets', '-n', ns, '-o', 'name'])).stdout.trim()).toBe('');
  });
});
