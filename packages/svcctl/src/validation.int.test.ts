import { createServer, request, type Server } from 'node:https';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createTestCa, svcconfigYaml } from '@svc/testing';
import { startSvcctlEnv, svcctl, type SvcctlEnv } from './svcctl-testing.js';

/**
 * The spec's fallback: against a server older than 1.27 (no server-side field validation),
 * `--validate` checks the objects on the client against the server's OpenAPI v3 schemas.
 * A proxy in front of a real server reports version 1.26 and records the queries it forwards.
 */
describe('--validate against a server without field validation', () => {
  let env: SvcctlEnv;
  let proxy: Server;
  let config: string;
  const queries: string[] = [];

  beforeAll(async () => {
    env = await startSvcctlEnv({ args: ['--naming=kubernetes'] });
    const api = env.kube.server.server;
    const ca = await createTestCa('old-server-ca');
    const serving = await ca.issue({ commonName: 'old-server', usages: ['server'], hosts: ['127.0.0.1'] });
    const upstream = new URL(api.url);
    proxy = createServer({ cert: serving.certPem, key: serving.keyPem }, (req, res) => {
      const url = new URL(req.url ?? '/', 'https://x');
      if (url.pathname === '/version') {
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ major: '1', minor: '26', gitVersion: 'v1.26.0' }));
        return;
      }
      queries.push(`${req.method ?? ''} ${url.pathname}?${url.searchParams.toString()}`);
      const out = request(
        {
          host: upstream.hostname,
          port: upstream.port,
          path: req.url,
          method: req.method,
          headers: { ...req.headers, host: upstream.host, authorization: `Bearer ${env.kube.server.adminToken}` },
          ca: api.caPem,
        },
        (r) => {
          res.writeHead(r.statusCode ?? 502, r.headers);
          r.pipe(res);
        },
      );
      req.pipe(out);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const port = (proxy.address() as { port: number }).port;
    config = join(env.home, 'old-server.svcconfig');
    await writeFile(config, svcconfigYaml({ server: `https://127.0.0.1:${port}`, caPem: ca.certPem, token: 'unused' }));
  });
  afterAll(async () => {
    await new Promise((r) => proxy.close(r));
    await env.stop();
  });

  const run = (args: string[]): ReturnType<typeof svcctl> =>
    svcctl(args, { env: { KUBECONFIG: config, HOME: env.home } });

  it('refuses unknown fields on the client (strict), warns (warn), or lets them through (false)', async () => {
    const file = join(env.home, 'unknown.yaml');
    await writeFile(
      file,
      'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: old, labels: {a: b}, bogusMeta: 1}\nbogus: 1\ndata: {a: "1"}\n',
    );
    queries.length = 0;
    const strict = await run(['create', '-f', file]);
    expect(strict.code).toBe(1);
    expect(strict.stderr).toBe(
      `error: error validating "${file}": error validating data: [ValidationError(ConfigMap.metadata): unknown field "bogusMeta" in io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta, ValidationError(ConfigMap): unknown field "bogus" in io.k8s.api.core.v1.ConfigMap]; if you choose to ignore these errors, turn validation off with --validate=false\n`,
    );
    expect(queries.some((q) => q.startsWith('POST'))).toBe(false);

    const warn = await run(['create', '-f', file, '--validate=warn']);
    expect(warn.code).toBe(0);
    expect(warn.stderr).toContain(
      'Warning: ValidationError(ConfigMap): unknown field "bogus" in io.k8s.api.core.v1.ConfigMap\n',
    );
    expect(warn.stdout).toBe('configmap/old created\n');
    const post = queries.find((q) => q.startsWith('POST'));
    expect(post).toBeDefined();
    expect(post).not.toContain('fieldValidation');

    await run(['delete', 'cm', 'old']);
    const off = await run(['create', '-f', file, '--validate=false']);
    expect(off).toMatchObject({ code: 0, stdout: 'configmap/old created\n' });
  });

  it('checks value types too', async () => {
    const file = join(env.home, 'types.yaml');
    await writeFile(file, 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: typed}\ndata: [1]\n');
    const r = await run(['apply', '-f', file]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      'ValidationError(ConfigMap.data): invalid type for io.k8s.api.core.v1.ConfigMap.data: got "array", expected "map"',
    );
  });
});
