import { createHmac, timingSafeEqual } from 'node:crypto';
import { ResourceClient } from '@svc/client';
import { waitFor } from '@svc/testing';
import type { ApiObject, ConfigMap } from '@svc/api';
import { withControllerManager } from '../cm-testing.js';
import { R } from '../resources.js';

const env = withControllerManager(['--controllers=bootstrapsigner']);
const b64 = (s: string): string => Buffer.from(s).toString('base64');
const KUBECONFIG =
  'apiVersion: v1\nkind: Config\nclusters:\n- name: ""\n  cluster:\n    server: https://10.0.0.1:6443\n    certificate-authority-data: LS0tLS1CRUdJTg==\n';

function tokenSecret(id: string, secret: string, o: { signing?: boolean; expiration?: string } = {}) {
  const data: Record<string, string> = { 'token-id': b64(id), 'token-secret': b64(secret) };
  if (o.signing ?? true) data['usage-bootstrap-signing'] = b64('true');
  if (o.expiration) data.expiration = b64(o.expiration);
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: `bootstrap-token-${id}`, namespace: 'svc-system' },
    type: 'bootstrap.svc.io/token',
    data,
  };
}

/**
 * Verifies a detached JWS the way a joining node does, written here without the library the
 * controller uses: the payload (base64url, no padding) goes between the two periods, and the
 * HMAC-SHA256 with the full token as key must match.
 */
function verifyDetached(jws: string, content: string, token: string): { kid?: string; alg?: string } {
  const [header, empty, signature] = jws.split('.');
  expect(empty).toBe('');
  const payload = Buffer.from(content).toString('base64url');
  const expected = createHmac('sha256', token).update(`${header}.${payload}`).digest();
  const got = Buffer.from(signature ?? '', 'base64url');
  expect(got.length === expected.length && timingSafeEqual(got, expected)).toBe(true);
  return JSON.parse(Buffer.from(header ?? '', 'base64url').toString('utf8')) as { kid?: string; alg?: string };
}

describe('bootstrap-signer-controller', () => {
  const secrets = () => new ResourceClient(env.api, R.secrets()).namespace('svc-system');
  const configMaps = () => new ResourceClient<ConfigMap>(env.api, R.configMaps()).namespace('svc-public');
  const clusterInfo = async () => (await configMaps().get('cluster-info')).data ?? {};

  beforeAll(async () => {
    await configMaps().create({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'cluster-info', namespace: 'svc-public' },
      data: { kubeconfig: KUBECONFIG },
    } as ApiObject);
  });

  it('signs cluster-info for a signing token with HS256 over the kubeconfig and the full token as key', async () => {
    await secrets().create(tokenSecret('abcdef', '0123456789abcdef'));
    const data = await waitFor('the signature', async () =>
      (await clusterInfo())['jws-kubeconfig-abcdef'] ? clusterInfo() : undefined,
    );
    const header = verifyDetached(data['jws-kubeconfig-abcdef'] ?? '', KUBECONFIG, 'abcdef.0123456789abcdef');
    expect(header).toEqual({ alg: 'HS256', kid: 'abcdef' });
    expect(data.kubeconfig).toBe(KUBECONFIG);
  });

  it('a signature does not verify with another token or over other content', async () => {
    const jws = (await clusterInfo())['jws-kubeconfig-abcdef'] ?? '';
    const [header, , signature] = jws.split('.');
    const other = createHmac('sha256', 'abcdef.ffffffffffffffff')
      .update(`${header}.${Buffer.from(KUBECONFIG).toString('base64url')}`)
      .digest('base64url');
    expect(other).not.toBe(signature);
    const tampered = createHmac('sha256', 'abcdef.0123456789abcdef')
      .update(`${header}.${Buffer.from(KUBECONFIG + ' ').toString('base64url')}`)
      .digest('base64url');
    expect(tampered).not.toBe(signature);
  });

  it('ignores tokens without the signing usage and expired tokens', async () => {
    await secrets().create(tokenSecret('nosign', '0123456789abcdef', { signing: false }));
    await secrets().create(tokenSecret('expird', '0123456789abcdef', { expiration: '2001-01-01T00:00:00Z' }));
    await secrets().create(tokenSecret('second', 'fedcba9876543210'));
    const data = await waitFor('the second signature', async () =>
      (await clusterInfo())['jws-kubeconfig-second'] ? clusterInfo() : undefined,
    );
    verifyDetached(data['jws-kubeconfig-second'] ?? '', KUBECONFIG, 'second.fedcba9876543210');
    expect(Object.keys(data).sort()).toEqual(['jws-kubeconfig-abcdef', 'jws-kubeconfig-second', 'kubeconfig']);
  });

  it('re-signs when the kubeconfig changes', async () => {
    const cm = await configMaps().get('cluster-info');
    const changed = KUBECONFIG.replace('10.0.0.1', '10.0.0.2');
    await configMaps().update({ ...cm, data: { ...cm.data, kubeconfig: changed } });
    await waitFor('signatures over the new content', async () => {
      const d = await clusterInfo();
      verifyDetached(d['jws-kubeconfig-abcdef'] ?? '', changed, 'abcdef.0123456789abcdef');
      return true;
    });
  });

  it('removes the signature of a deleted token and of a token that expires', async () => {
    await secrets().delete('bootstrap-token-second');
    await waitFor("the deleted token's signature to go", async () => !(await clusterInfo())['jws-kubeconfig-second']);
    await secrets().create(
      tokenSecret('soonxx', '0123456789abcdef', { expiration: new Date(Date.now() + 2000).toISOString() }),
    );
    await waitFor("the short-lived token's signature", async () =>
      Boolean((await clusterInfo())['jws-kubeconfig-soonxx']),
    );
    await waitFor("the expired token's signature to go", async () => !(await clusterInfo())['jws-kubeconfig-soonxx'], {
      timeoutMs: 10_000,
    });
    expect((await clusterInfo())['jws-kubeconfig-abcdef']).toBeDefined();
  });
});
