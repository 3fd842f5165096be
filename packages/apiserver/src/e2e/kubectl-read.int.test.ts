import { spawn } from 'node:child_process';
import { startKubectlEnv, waitFor, type KubectlEnv, type TestApiServer } from '@svc/testing';

// Stock kubectl on the read path: `get -w` and chunked `get`.
let env: KubectlEnv;
let t: TestApiServer;
let home: string;
beforeAll(async () => {
  env = await startKubectlEnv();
  t = env.server;
  home = env.home;
});
afterAll(async () => {
  await env.stop();
});

const run = (args: string[], stdin?: string) => env.run(args, { stdin });

function cm(name: string, label: string): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, labels: { test: label } },
    data: { k: name },
  });
}

it('get --chunk-size=2 lists 7 configmaps, one request per chunk', async () => {
  for (let i = 0; i < 7; i++) expect((await run(['create', '-f', '-'], cm(`chunk-${i}`, 'chunks'))).code).toBe(0);
  const r = await run(['get', 'configmaps', '-l', 'test=chunks', '--chunk-size=2', '-o', 'name', '-v=6']);
  expect(r.code).toBe(0);
  expect(r.stdout.trim().split('\n')).toEqual([0, 1, 2, 3, 4, 5, 6].map((i) => `configmap/chunk-${i}`));
  const requests = r.stderr.split('\n').filter((l) => /GET https:\S+\/configmaps\?/.test(l));
  expect(requests).toHaveLength(4);
  expect(requests.slice(1).every((l) => l.includes('continue='))).toBe(true);
});

it('get -w prints the existing object, then each change as it happens', async () => {
  expect((await run(['create', '-f', '-'], cm('watched', 'watch'))).code).toBe(0);
  const child = spawn('kubectl', ['get', 'configmaps', '-l', 'test=watch', '-w', '--output-watch-events'], {
    env: { ...process.env, KUBECONFIG: t.svcconfigPath, HOME: home },
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => {
    out += d.toString();
  });
  try {
    await waitFor('the initial list', () => out.includes('watched'));
    expect((await run(['label', 'configmap', 'watched', 'extra=1'])).code).toBe(0);
    await waitFor('the MODIFIED line', () =>
      out.split('\n').some((l) => l.startsWith('MODIFIED') && l.includes('watched')),
    );
    expect((await run(['delete', 'configmap', 'watched'])).code).toBe(0);
    await waitFor('the DELETED line', () =>
      out.split('\n').some((l) => l.startsWith('DELETED') && l.includes('watched')),
    );
    const lines = out.trim().split('\n');
    expect(lines[0]).toMatch(/^EVENT\s+NAME\s+DATA\s+AGE/);
    expect(lines.slice(1).map((l) => l.split(/\s+/).slice(0, 2).join(' '))).toEqual([
      'ADDED watched',
      'MODIFIED watched',
      'DELETED watched',
    ]);
  } finally {
    child.kill();
  }
});
