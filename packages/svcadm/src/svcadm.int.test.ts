// svcadm against a real API server (bootstrap-token authentication, RBAC and Node
// authorization) and a controller manager in this process running the bootstrap signer and the
// token cleaner: tokens, cluster-info, and joining with every way discovery must refuse.
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger } from '@svc/component-base';
import { RestClient, loadSvcconfig } from '@svc/client';
import {
  parseControllerManagerOptions,
  startControllerManager,
  type RunningControllerManager,
} from '@svc/controller-manager';
import { createTestCa, createTestCsr, freePort, startTestApiServer, waitFor, type TestApiServer } from '@svc/testing';
import { runSvcadm } from './svcadm.js';
import { certificatesOfPem, publicKeyPin } from './pubkey-pin.js';

interface Run {
  code: number;
  out: string;
  err: string;
}

async function svcadm(...args: string[]): Promise<Run> {
  const r = { out: '', err: '' };
  const code = await runSvcadm(args, {
    out: (s) => {
      r.out += s;
    },
    err: (s) => {
      r.err += s;
    },
  });
  return { code, ...r };
}

const CLUSTER_INFO = '/api/v1/namespaces/svc-public/configmaps/cluster-info';
const SECRETS = '/api/v1/namespaces/svc-system/secrets';

describe('svcadm', () => {
  let server: TestApiServer;
  let manager: RunningControllerManager;
  let dir: string;
  let admin: string;
  let endpoint: string;
  let caHash: string;
  let token: string;
  /** The controller manager's warnings and errors, named when a wait on its controllers fails. */
  const managerLog: string[] = [];
  const waitForManager = async <T>(...args: Parameters<typeof waitFor<T>>): Promise<T> =>
    waitFor(...args).catch((e: unknown) => {
      throw new Error(`${(e as Error).message}; the controller manager logged: ${managerLog.join(' | ') || 'nothing'}`);
    });

  const clusterInfo = async (): Promise<Record<string, string>> =>
    (await server.client.get(CLUSTER_INFO)).json<{ data: Record<string, string> }>().data;
  const signedFor = (id: string) => async () => Boolean((await clusterInfo())[`jws-kubeconfig-${id}`]);
  const joinArgs = (t: string, ...extra: string[]): string[] => [
    'join',
    endpoint,
    '--token',
    t,
    '--discovery-timeout',
    '1s',
    '--no-start',
    ...extra,
  ];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'svcadm-'));
    server = await startTestApiServer({ args: ['--enable-bootstrap-token-auth', '--authorization-mode=RBAC,Node'] });
    admin = server.svcconfigPath;
    endpoint = new URL(server.server.url).host;
    const [ca] = certificatesOfPem(server.server.caPem);
    if (!ca) throw new Error('the server has no CA');
    caHash = publicKeyPin(ca);
    manager = await startControllerManager(
      parseControllerManagerOptions(
        [
          '--svcconfig',
          admin,
          '--bind-address',
          '127.0.0.1',
          '--secure-port',
          String(await freePort()),
          '--cert-dir',
          join(dir, 'cm'),
          '--controllers=*,tokencleaner,bootstrapsigner',
          // Not under test here. With leader election a stall of the renew deadline in this
          // (shared, busy) process would stop every controller for the rest of the file.
          '--leader-elect=false',
        ],
        { quiet: true },
      ),
      { logger: createLogger({ write: (line) => void (line.includes(' INFO ') || managerLog.push(line)) }) },
    );
  });

  afterAll(async () => {
    await manager?.shutdown();
    await server?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  describe('init cluster-info', () => {
    it('publishes cluster-info (server and CA) readable anonymously, and the join bindings; again: updates', async () => {
      // Anonymous users may read nothing before.
      expect((await server.client.get(CLUSTER_INFO, { token: null })).status).toBe(403);
      const first = await svcadm('init', 'cluster-info', '--svcconfig', admin);
      expect(first).toMatchObject({ code: 0, err: '' });
      expect(first.out).toMatch(/^\[bootstrap-token\] created ConfigMap "cluster-info" in namespace "svc-public"$/m);
      expect(first.out).toMatch(
        /^\[bootstrap-token\] created ClusterRoleBinding "svcadm:node-autoapprove-bootstrap"$/m,
      );
      const anonymous = await server.client.get(CLUSTER_INFO, { token: null });
      expect(anonymous.status).toBe(200);
      const kubeconfig = anonymous.json<{ data: { kubeconfig: string } }>().data.kubeconfig;
      expect(kubeconfig).toContain(`server: ${server.server.url}`);
      expect(kubeconfig).toContain(
        `certificate-authority-data: ${Buffer.from(server.server.caPem).toString('base64')}`,
      );
      // Only that ConfigMap is public.
      expect((await server.client.get('/api/v1/namespaces/svc-public/configmaps', { token: null })).status).toBe(403);
      const again = await svcadm('init', 'cluster-info', '--svcconfig', admin);
      expect(again.code).toBe(0);
      expect(again.out).not.toMatch(/created/);
      expect(again.out.split('\n').filter((l) => l !== '')).toHaveLength(6);
      const crb = (
        await server.client.get('/apis/rbac.authorization.svc.io/v1/clusterrolebindings/svcadm:svclet-bootstrap')
      ).json();
      expect(crb).toMatchObject({
        roleRef: { kind: 'ClusterRole', name: 'system:node-bootstrapper' },
        subjects: [{ kind: 'Group', name: 'system:bootstrappers:svcadm:default-node-token' }],
      });
    });
  });

  describe('token', () => {
    it('create prints a new token stored with the default TTL, usages and group; the signer signs cluster-info for it', async () => {
      const before = Date.now();
      const r = await svcadm('token', 'create', '--svcconfig', admin);
      expect(r).toMatchObject({ code: 0, err: '' });
      expect(r.out).toMatch(/^[a-z0-9]{6}\.[a-z0-9]{16}\n$/);
      token = r.out.trim();
      const id = token.slice(0, 6);
      const s = (await server.client.get(`${SECRETS}/bootstrap-token-${id}`)).json<{
        type: string;
        data: Record<string, string>;
      }>();
      expect(s.type).toBe('bootstrap.svc.io/token');
      const data = Object.fromEntries(Object.entries(s.data).map(([k, v]) => [k, Buffer.from(v, 'base64').toString()]));
      expect(data).toMatchObject({
        'token-id': id,
        'token-secret': token.slice(7),
        'usage-bootstrap-signing': 'true',
        'usage-bootstrap-authentication': 'true',
        'auth-extra-groups': 'system:bootstrappers:svcadm:default-node-token',
      });
      const expires = Date.parse(data.expiration ?? '');
      expect(expires).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000 + 24 * 3600_000);
      expect(expires).toBeLessThanOrEqual(Date.now() + 24 * 3600_000);
      await waitForManager('the signature for the new token', signedFor(id));
    });

    it('create takes a given token, --ttl 0, --usages, --groups and --description; list shows them as kubeadm does', async () => {
      const r = await svcadm(
        'token',
        'create',
        'abcdef.0123456789abcdef',
        '--svcconfig',
        admin,
        '--ttl',
        '0',
        '--usages',
        'signing',
        '--groups',
        'system:bootstrappers:workers,system:bootstrappers:x:y',
        '--description',
        'for workers',
      );
      expect(r).toMatchObject({ code: 0, out: 'abcdef.0123456789abcdef\n' });
      const list = await svcadm('token', 'list', '--svcconfig', admin);
      expect(list.code).toBe(0);
      const lines = list.out.trimEnd().split('\n');
      expect(lines[0]).toMatch(/^TOKEN\s+TTL\s+EXPIRES\s+USAGES\s+DESCRIPTION\s+EXTRA GROUPS$/);
      expect(lines).toContainEqual(
        expect.stringMatching(
          /^abcdef\.0123456789abcdef\s+<forever>\s+<never>\s+signing\s+for workers\s+system:bootstrappers:workers,system:bootstrappers:x:y$/,
        ),
      );
      expect(lines).toContainEqual(
        expect.stringMatching(
          new RegExp(
            `^${token.replace('.', '\\.')}\\s+23h\\s+\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ\\s+authentication,signing\\s+<none>\\s+system:bootstrappers:svcadm:default-node-token$`,
          ),
        ),
      );
    });

    it('create refuses groups outside system:bootstrappers:, unknown usages and a bad token (exit 2), and an existing id (exit 1)', async () => {
      const group = await svcadm('token', 'create', '--svcconfig', admin, '--groups', 'system:masters');
      expect(group).toEqual({
        code: 2,
        out: '',
        err: 'Error: bootstrap group "system:masters" is invalid (must match \\Asystem:bootstrappers:[a-z0-9:-]{0,255}[a-z0-9]\\z)\n',
      });
      const usage = await svcadm('token', 'create', '--svcconfig', admin, '--usages', 'signing,everything');
      expect(usage).toEqual({
        code: 2,
        out: '',
        err: 'Error: invalid bootstrap token usage string: everything, valid usage options: signing,authentication\n',
      });
      expect((await svcadm('token', 'create', 'nope', '--svcconfig', admin)).code).toBe(2);
      expect(await svcadm('token', 'create', 'abcdef.ffffffffffffffff', '--svcconfig', admin)).toEqual({
        code: 1,
        out: '',
        err: 'Error: a token with id "abcdef" already exists\n',
      });
      const secrets = (await server.client.get(SECRETS)).json<{ items: Array<{ metadata: { name: string } }> }>().items;
      expect(secrets.filter((s) => s.metadata.name.startsWith('bootstrap-token-'))).toHaveLength(2);
    });

    it("create --print-join-command prints the join command with the CA's pin; ca-cert-hash prints the same pin", async () => {
      const r = await svcadm('token', 'create', '--svcconfig', admin, '--print-join-command');
      expect(r.code).toBe(0);
      const m = new RegExp(
        `^svcadm join ${endpoint.replace(/\./g, '\\.')} --token ([a-z0-9]{6}\\.[a-z0-9]{16}) --discovery-token-ca-cert-hash (sha256:[0-9a-f]{64})\\n$`,
      ).exec(r.out);
      expect(m?.[2]).toBe(caHash);
      await writeFile(join(dir, 'ca.crt'), server.server.caPem);
      expect(await svcadm('token', 'ca-cert-hash', '--ca-file', join(dir, 'ca.crt'))).toEqual({
        code: 0,
        out: `${caHash}\n`,
        err: '',
      });
      expect(await svcadm('token', 'delete', m?.[1] ?? '', '--svcconfig', admin)).toMatchObject({ code: 0 });
    });
  });

  describe('join', () => {
    it('with the token and the CA pin writes a bootstrap svcconfig that works: the node can ask for its client certificate', async () => {
      const path = join(dir, 'node-1', 'bootstrap-svclet.conf');
      const r = await svcadm(
        ...joinArgs(token, '--discovery-token-ca-cert-hash', caHash, '--bootstrap-kubeconfig', path),
      );
      expect(r.code).toBe(0);
      expect(r.out).toBe(`[join] wrote the bootstrap svcconfig for ${server.server.url} to ${path}\n`);
      const config = loadSvcconfig(path);
      expect(config).toMatchObject({ server: server.server.url, caPem: server.server.caPem, user: { token } });
      const client = new RestClient(config);
      try {
        const csr = await createTestCsr({ commonName: 'system:node:node-1', organizations: ['system:nodes'] });
        const created = await client.request('POST', '/apis/certificates.svc.io/v1/certificatesigningrequests', {
          body: {
            apiVersion: 'certificates.svc.io/v1',
            kind: 'CertificateSigningRequest',
            metadata: { generateName: 'node-csr-' },
            spec: {
              request: Buffer.from(csr.csrPem).toString('base64'),
              signerName: 'svc.io/svc-apiserver-client-svclet',
              usages: ['digital signature', 'client auth'],
            },
          },
        });
        expect(created.status).toBe(201);
        const obj = created.json<{ metadata: { name: string }; spec: { username: string; groups: string[] } }>();
        expect(obj.spec.username).toBe(`system:bootstrap:${token.slice(0, 6)}`);
        expect(obj.spec.groups).toEqual(
          expect.arrayContaining(['system:bootstrappers', 'system:bootstrappers:svcadm:default-node-token']),
        );
        // The bindings of `init cluster-info` let the approver approve it.
        await waitForManager('the CSR to be approved', async () => {
          const got = (
            await server.client.get(`/apis/certificates.svc.io/v1/certificatesigningrequests/${obj.metadata.name}`)
          ).json<{ status?: { conditions?: Array<{ type: string }> } }>();
          return got.status?.conditions?.some((c) => c.type === 'Approved');
        });
        // A bootstrap identity can do nothing else.
        expect((await client.request('GET', '/api/v1/namespaces/default/secrets')).status).toBe(403);
      } finally {
        client.close();
      }
    });

    it('--discovery-token-unsafe-skip-ca-verification joins without a pin; neither pin nor skip is refused (exit 2)', async () => {
      expect(
        (
          await svcadm(
            ...joinArgs(
              token,
              '--discovery-token-unsafe-skip-ca-verification',
              '--bootstrap-kubeconfig',
              join(dir, 'unsafe.conf'),
            ),
          )
        ).code,
      ).toBe(0);
      const r = await svcadm(...joinArgs(token, '--bootstrap-kubeconfig', join(dir, 'nopin.conf')));
      expect(r.code).toBe(2);
      expect(r.err).toMatch(/^Error: using token-based discovery without --discovery-token-ca-cert-hash can be unsafe/);
    });

    it('refuses a wrong token secret: the signature does not verify', async () => {
      const wrong = `${token.slice(0, 6)}.ffffffffffffffff`;
      const r = await svcadm(
        ...joinArgs(wrong, '--discovery-token-ca-cert-hash', caHash, '--bootstrap-kubeconfig', join(dir, 'wrong.conf')),
      );
      expect(r.code).toBe(1);
      expect(r.err).toMatch(
        new RegExp(
          `^Error: failed to verify the JWS signature of the cluster-info ConfigMap for token "${token.slice(0, 6)}"`,
          'm',
        ),
      );
      await expect(readFile(join(dir, 'wrong.conf'))).rejects.toThrow(/ENOENT/);
    });

    it('refuses an unknown token id: no signature for it (after --discovery-timeout)', async () => {
      const r = await svcadm(
        ...joinArgs(
          'zzzzzz.0123456789abcdef',
          '--discovery-token-ca-cert-hash',
          caHash,
          '--bootstrap-kubeconfig',
          join(dir, 'unknown.conf'),
        ),
      );
      expect(r.code).toBe(1);
      expect(r.err).toMatch(
        /^Error: no signature for token "zzzzzz" in the cluster-info ConfigMap.*\(gave up after 1s\)$/m,
      );
    });

    it('refuses a CA that does not match the pin', async () => {
      const [other] = certificatesOfPem((await createTestCa('not-the-cluster-ca')).certPem);
      const r = await svcadm(
        ...joinArgs(
          token,
          '--discovery-token-ca-cert-hash',
          publicKeyPin(other ?? Buffer.alloc(0)),
          '--bootstrap-kubeconfig',
          join(dir, 'pin.conf'),
        ),
      );
      expect(r.code).toBe(1);
      expect(r.err.trimEnd().split('\n').at(-1)).toBe(
        `Error: cluster CA found in the cluster-info ConfigMap is invalid: none of the public keys "${caHash}" are pinned`,
      );
      expect((await svcadm(...joinArgs(token, '--discovery-token-ca-cert-hash', 'sha256:abc'))).code).toBe(2);
    });

    it('refuses an expired token: the signer drops its signature', async () => {
      const r = await svcadm('token', 'create', '--svcconfig', admin, '--ttl', '2s');
      const shortLived = r.out.trim();
      const id = shortLived.slice(0, 6);
      await waitForManager('the signature', signedFor(id));
      await waitForManager("the expired token's signature to go", async () => !(await signedFor(id)()), {
        timeoutMs: 10_000,
      });
      const j = await svcadm(
        ...joinArgs(
          shortLived,
          '--discovery-token-ca-cert-hash',
          caHash,
          '--bootstrap-kubeconfig',
          join(dir, 'expired.conf'),
        ),
      );
      expect(j.code).toBe(1);
      expect(j.err).toMatch(new RegExp(`^Error: no signature for token "${id}"`, 'm'));
      // The token cleaner deletes it.
      await waitForManager(
        'the expired token to be deleted',
        async () => (await server.client.get(`${SECRETS}/bootstrap-token-${id}`)).status === 404,
        { timeoutMs: 10_000 },
      );
    });

    describe('against an impostor serving cluster-info', () => {
      let impostor: Server;
      let impostorEndpoint: string;
      let served: { data: Record<string, string> };

      beforeAll(async () => {
        const ca = await createTestCa('impostor');
        const cert = await ca.issue({ commonName: 'impostor', usages: ['server'], hosts: ['127.0.0.1'] });
        impostor = createServer({ cert: cert.certPem, key: cert.keyPem }, (req, res) => {
          if (req.url !== CLUSTER_INFO) {
            res.writeHead(404).end();
            return;
          }
          res
            .writeHead(200, { 'content-type': 'application/json' })
            .end(
              JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cluster-info' }, ...served }),
            );
        });
        await new Promise<void>((r) => impostor.listen(0, '127.0.0.1', () => r()));
        impostorEndpoint = `127.0.0.1:${(impostor.address() as AddressInfo).port}`;
      });
      afterAll(async () => {
        impostor.closeAllConnections();
        await new Promise<void>((r) => impostor.close(() => r()));
      });

      it('a kubeconfig changed after signing is refused: the signature does not verify', async () => {
        const genuine = await clusterInfo();
        served = {
          data: {
            ...genuine,
            kubeconfig: (genuine.kubeconfig ?? '').replace(server.server.url, `https://${impostorEndpoint}`),
          },
        };
        const r = await svcadm(
          'join',
          impostorEndpoint,
          '--token',
          token,
          '--discovery-token-ca-cert-hash',
          caHash,
          '--discovery-timeout',
          '1s',
          '--no-start',
          '--bootstrap-kubeconfig',
          join(dir, 'tampered.conf'),
        );
        expect(r.code).toBe(1);
        expect(r.err).toMatch(/^Error: failed to verify the JWS signature of the cluster-info ConfigMap/m);
      });

      it('the genuine signed cluster-info replayed by another server fails the second, verified fetch', async () => {
        served = { data: await clusterInfo() };
        const r = await svcadm(
          'join',
          impostorEndpoint,
          '--token',
          token,
          '--discovery-token-ca-cert-hash',
          caHash,
          '--discovery-timeout',
          '1s',
          '--no-start',
          '--bootstrap-kubeconfig',
          join(dir, 'replayed.conf'),
        );
        expect(r.code).toBe(1);
        expect(r.err).toMatch(
          /^Error: failed to fetch the cluster-info ConfigMap a second time, verifying the server with the cluster CA: /m,
        );
      });
    });

    it('without --no-start runs svclet with the bootstrap svcconfig and the arguments after --, and exits with its code', async () => {
      const script = join(dir, 'fake-svclet.sh');
      const argsFile = join(dir, 'svclet-args');
      await writeFile(script, `#!/bin/sh\nprintf '%s\\n' "$@" > ${JSON.stringify(argsFile)}\nexit 3\n`);
      await chmod(script, 0o755);
      const boot = join(dir, 'started', 'bootstrap.conf');
      const r = await svcadm(
        'join',
        endpoint,
        '--token',
        token,
        '--discovery-token-ca-cert-hash',
        caHash,
        '--bootstrap-kubeconfig',
        boot,
        '--svclet-svcconfig',
        join(dir, 'started', 'svclet.conf'),
        '--svclet-path',
        script,
        '--',
        '--port',
        '10250',
        '--cert-dir',
        join(dir, 'pki'),
      );
      expect(r.code).toBe(3);
      expect((await readFile(argsFile, 'utf8')).trimEnd().split('\n')).toEqual([
        '--bootstrap-kubeconfig',
        boot,
        '--svcconfig',
        join(dir, 'started', 'svclet.conf'),
        '--port',
        '10250',
        '--cert-dir',
        join(dir, 'pki'),
      ]);
    });
  });

  describe('token delete', () => {
    it('deletes by id or whole token, and the signer drops the signature; unknown ids fail, bad arguments exit 2', async () => {
      const id = token.slice(0, 6);
      expect(await svcadm('token', 'delete', token, 'abcdef', '--svcconfig', admin)).toEqual({
        code: 0,
        out: `bootstrap token "${id}" deleted\nbootstrap token "abcdef" deleted\n`,
        err: '',
      });
      await waitForManager("the deleted token's signature to go", async () => !(await signedFor(id)()));
      const list = await svcadm('token', 'list', '--svcconfig', admin);
      expect(list.out).not.toContain(id);
      expect(await svcadm('token', 'delete', 'abcdef', '--svcconfig', admin)).toEqual({
        code: 1,
        out: '',
        err: 'Error: failed to delete bootstrap token "abcdef": not found\n',
      });
      expect((await svcadm('token', 'delete', 'ABC', '--svcconfig', admin)).code).toBe(2);
      const j = await svcadm(
        ...joinArgs(
          token,
          '--discovery-token-ca-cert-hash',
          caHash,
          '--bootstrap-kubeconfig',
          join(dir, 'deleted.conf'),
        ),
      );
      expect(j.err).toMatch(/no signature for token/);
    });
  });
});
