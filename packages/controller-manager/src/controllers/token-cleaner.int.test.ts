import { ResourceClient } from '@svc/client';
import { waitFor } from '@svc/testing';
import { withControllerManager } from '../cm-testing.js';
import { R } from '../resources.js';

const env = withControllerManager(['--controllers=tokencleaner']);
const b64 = (s: string): string => Buffer.from(s).toString('base64');

function tokenSecret(id: string, expiration?: string, type = 'bootstrap.svc.io/token') {
  const data: Record<string, string> = {
    'token-id': b64(id),
    'token-secret': b64('0123456789abcdef'),
    'usage-bootstrap-authentication': b64('true'),
  };
  if (expiration !== undefined) data.expiration = b64(expiration);
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: `bootstrap-token-${id}`, namespace: 'svc-system' },
    type,
    data,
  };
}

describe('token-cleaner-controller', () => {
  const secrets = () => new ResourceClient(env.api, R.secrets()).namespace('svc-system');
  const exists = async (name: string) =>
    (await env.api.request('GET', `/api/v1/namespaces/svc-system/secrets/${name}`)).status === 200;

  it('deletes a bootstrap token whose expiration has passed', async () => {
    await secrets().create(tokenSecret('aaaaaa', new Date(Date.now() - 60_000).toISOString().replace(/\.\d+Z$/, 'Z')));
    await waitFor('the expired token to be deleted', async () => !(await exists('bootstrap-token-aaaaaa')));
  });

  it('deletes a token when it expires, not before', async () => {
    const at = Date.now() + 3000;
    await secrets().create(tokenSecret('bbbbbb', new Date(at).toISOString()));
    await waitFor('the token to be deleted once it expired', async () => !(await exists('bootstrap-token-bbbbbb')), {
      timeoutMs: 15_000,
    });
    expect(Date.now()).toBeGreaterThanOrEqual(at);
  });

  it('deletes a token whose expiration does not parse (it counts as expired)', async () => {
    await secrets().create(tokenSecret('cccccc', 'next tuesday'));
    await waitFor('the unreadable token to be deleted', async () => !(await exists('bootstrap-token-cccccc')));
  });

  it('keeps tokens without expiration, tokens in the future and Secrets of another type', async () => {
    await secrets().create(tokenSecret('dddddd'));
    await secrets().create(tokenSecret('eeeeee', new Date(Date.now() + 3_600_000).toISOString()));
    await secrets().create({ ...tokenSecret('ffffff', '2000-01-01T00:00:00Z', 'Opaque') });
    // A token that expired, created after them: once it is gone the controller has seen the others.
    await secrets().create(tokenSecret('gggggg', '2000-01-01T00:00:00Z'));
    await waitFor('the marker token to be deleted', async () => !(await exists('bootstrap-token-gggggg')));
    for (const n of ['dddddd', 'eeeeee', 'ffffff']) expect(await exists(`bootstrap-token-${n}`)).toBe(true);
  });
});
