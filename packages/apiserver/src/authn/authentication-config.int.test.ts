// --authentication-config against a real OpenID issuer served by the test over HTTPS: the
// jwt[] authenticators (audiences, discovery URL, claim rules, CEL mappings, user rules), then
// a real API server: tokens, reload when the file changes (a bad file keeps the old config),
// the reload metrics, and the anonymous section.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  HttpsClient,
  startOidcIssuer,
  startTestApiServer,
  waitFor,
  type OidcIssuer,
  type TestApiServer,
  type Json,
} from '@svc/testing';
import { parseAuthenticationConfig, type AuthenticationConfigContext } from './authentication-config.js';
import { JwtAuthenticator } from './jwt-authenticator.js';

const CLIENT = 'svc-client';
const API_VERSION = 'apiserver.config.svc.io/v1beta1';
const ctx: AuthenticationConfigContext = {
  apiVersion: API_VERSION,
  serviceAccountIssuers: [],
  anonymousConfigurable: true,
  anonymousAuthFlagSet: false,
};
let issuer: OidcIssuer;
const stop = new AbortController();
const now = (): number => Math.floor(Date.now() / 1000);

beforeAll(async () => {
  issuer = await startOidcIssuer({ clientId: CLIENT, path: 'realms/structured' });
});

afterAll(async () => {
  stop.abort();
  await issuer?.close();
});

const doc = (jwt: Json[], extra: Json = {}): Json => ({
  apiVersion: API_VERSION,
  kind: 'AuthenticationConfiguration',
  jwt,
  ...extra,
});
const entry = (o: Json = {}): Json => ({
  issuer: { url: issuer.url, certificateAuthority: issuer.caPem, audiences: [CLIENT], ...o.issuer },
  claimMappings: { username: { claim: 'sub', prefix: '' }, ...o.claimMappings },
  ...(o.claimValidationRules ? { claimValidationRules: o.claimValidationRules } : {}),
  ...(o.userValidationRules ? { userValidationRules: o.userValidationRules } : {}),
});

async function authenticator(o: Json = {}, errors?: string[]): Promise<JwtAuthenticator> {
  const c = parseAuthenticationConfig(JSON.stringify(doc([entry(o)])), ctx).jwt[0];
  if (!c) throw new Error('no authenticator');
  const a = new JwtAuthenticator(c, { signal: stop.signal, onError: (m) => errors?.push(m) });
  if (!errors) await a.ready();
  return a;
}

describe('JwtAuthenticator', () => {
  it('maps claim + prefix for username and groups; leaves other issuers and non-JWTs alone', async () => {
    const a = await authenticator({
      claimMappings: {
        username: { claim: 'sub', prefix: 'oidc:' },
        groups: { claim: 'groups', prefix: 'g:' },
        uid: { claim: 'uid' },
      },
    });
    expect(await a.authenticateToken(await issuer.token({ groups: ['dev'], uid: 'u-1' }))).toEqual({
      name: 'oidc:alice',
      uid: 'u-1',
      groups: ['g:dev'],
    });
    expect(await a.authenticateToken(await issuer.token({ groups: 'ops' }))).toEqual({
      name: 'oidc:alice',
      groups: ['g:ops'],
    });
    expect(await a.authenticateToken(await issuer.token({ iss: 'https://other.example' }))).toBeNull();
    expect(await a.authenticateToken('not-a-jwt')).toBeNull();
  });

  it('needs one of the audiences (MatchAny)', async () => {
    const a = await authenticator({ issuer: { audiences: ['one', 'two'], audienceMatchPolicy: 'MatchAny' } });
    expect((await a.authenticateToken(await issuer.token({ aud: ['x', 'two'] })))?.name).toBe('alice');
    expect((await a.authenticateToken(await issuer.token({ aud: 'one' })))?.name).toBe('alice');
    await expect(a.authenticateToken(await issuer.token({ aud: CLIENT }))).rejects.toThrow(
      /unexpected "aud" claim value/,
    );
  });

  it.each<[string, Json, RegExp]>([
    ['expired', { exp: now() - 10 }, /"exp" claim timestamp check failed/],
    ['without exp', { exp: undefined }, /missing required "exp" claim/],
    ['without the username claim', { sub: undefined }, /claim sub is missing/],
  ])('refuses a token %s', async (_what, claims, why) => {
    const a = await authenticator();
    await expect(a.authenticateToken(await issuer.token(claims))).rejects.toThrow(why);
  });

  it('refuses a tampered token and an unknown key', async () => {
    const a = await authenticator();
    const [h, , s] = (await issuer.token()).split('.');
    await expect(
      a.authenticateToken(
        `${h}.${Buffer.from(JSON.stringify({ iss: issuer.url, aud: CLIENT, sub: 'admin', exp: now() + 60 })).toString('base64url')}.${s}`,
      ),
    ).rejects.toThrow(/signature verification failed/);
    await expect(a.authenticateToken(await issuer.token({}, { key: await issuer.unpublishedKey() }))).rejects.toThrow(
      /no applicable key/,
    );
  });

  it('applies claimValidationRules: claim + requiredValue, and CEL with its message', async () => {
    const a = await authenticator({
      claimValidationRules: [
        { claim: 'hd', requiredValue: 'example.com' },
        { expression: 'claims.tier == "gold"', message: 'gold members only' },
      ],
    });
    expect((await a.authenticateToken(await issuer.token({ hd: 'example.com', tier: 'gold' })))?.name).toBe('alice');
    await expect(a.authenticateToken(await issuer.token({ tier: 'gold' }))).rejects.toThrow(
      'required claim hd not present',
    );
    await expect(a.authenticateToken(await issuer.token({ hd: 'evil.com', tier: 'gold' }))).rejects.toThrow(
      'does not have the value "example.com"',
    );
    await expect(a.authenticateToken(await issuer.token({ hd: 'example.com', tier: 'silver' }))).rejects.toThrow(
      'gold members only',
    );
    const notBool = await authenticator({ claimValidationRules: [{ expression: 'claims.tier' }] });
    await expect(notBool.authenticateToken(await issuer.token({ tier: 'gold' }))).rejects.toThrow(
      'must return a boolean',
    );
  });

  it('maps with CEL: username, groups, uid, extra; an empty username fails', async () => {
    const a = await authenticator({
      claimMappings: {
        username: { expression: 'claims.email_verified ? "mail:" + claims.email : ""' },
        groups: { expression: 'claims.roles.map(r, "role:" + r)' },
        uid: { expression: 'claims.sub' },
        extra: [
          { key: 'example.com/tenant', valueExpression: 'claims.tenant' },
          { key: 'example.com/empty', valueExpression: '""' },
        ],
      },
    });
    expect(
      await a.authenticateToken(
        await issuer.token({ email: 'jo@example.com', email_verified: true, roles: ['a', 'b'], tenant: 't1' }),
      ),
    ).toEqual({
      name: 'mail:jo@example.com',
      uid: 'alice',
      groups: ['role:a', 'role:b'],
      extra: { 'example.com/tenant': ['t1'] },
    });
    await expect(
      a.authenticateToken(
        await issuer.token({ email: 'jo@example.com', email_verified: false, roles: [], tenant: 't' }),
      ),
    ).rejects.toThrow('empty');
    // A claim the expression needs is missing: the token is refused.
    await expect(
      a.authenticateToken(await issuer.token({ email: 'jo@example.com', email_verified: true, tenant: 't' })),
    ).rejects.toThrow(/roles/);
  });

  it('needs email_verified true for the email claim when present', async () => {
    const a = await authenticator({ claimMappings: { username: { claim: 'email', prefix: '' } } });
    expect((await a.authenticateToken(await issuer.token({ email: 'x@y', email_verified: true })))?.name).toBe('x@y');
    await expect(a.authenticateToken(await issuer.token({ email: 'x@y', email_verified: false }))).rejects.toThrow(
      'not verified',
    );
  });

  it('applies userValidationRules over the mapped user', async () => {
    const a = await authenticator({
      claimMappings: { username: { claim: 'sub', prefix: '' }, groups: { claim: 'groups', prefix: '' } },
      userValidationRules: [
        {
          expression: '!user.username.startsWith("system:")',
          message: 'username cannot use the reserved system: prefix',
        },
        {
          expression: 'user.groups.all(g, !g.startsWith("system:"))',
          message: 'groups cannot use the reserved system: prefix',
        },
      ],
    });
    expect((await a.authenticateToken(await issuer.token({ groups: ['dev'] })))?.name).toBe('alice');
    await expect(a.authenticateToken(await issuer.token({ sub: 'system:admin', groups: [] }))).rejects.toThrow(
      'username cannot use the reserved system: prefix',
    );
    await expect(a.authenticateToken(await issuer.token({ groups: ['system:masters'] }))).rejects.toThrow(
      'groups cannot use the reserved system: prefix',
    );
  });

  it('uses discoveryURL, whose issuer must equal issuer.url', async () => {
    const discoveryURL = `${issuer.url}/.well-known/openid-configuration`;
    const before = issuer.requests.discovery;
    const a = await authenticator({ issuer: { discoveryURL } });
    expect(issuer.requests.discovery).toBe(before + 1);
    expect((await a.authenticateToken(await issuer.token()))?.name).toBe('alice');

    const errors: string[] = [];
    const other = `${issuer.url}/other`;
    const wrong = await authenticator({ issuer: { url: other, discoveryURL } }, errors);
    await waitFor('a discovery error', () => errors.length >= 1);
    expect(errors[0]).toContain(`expected ${JSON.stringify(other)} got ${JSON.stringify(issuer.url)}`);
    await expect(wrong.authenticateToken(await issuer.token({ iss: other }))).rejects.toThrow('not initialized');
  });
});

describe('API server with --authentication-config', () => {
  let t: TestApiServer;
  let dir: string;
  let file: string;
  let anon: HttpsClient;
  const ssr = (token?: string) =>
    anon.withToken(token).post('/apis/authentication.svc.io/v1/selfsubjectreviews', {
      apiVersion: 'authentication.svc.io/v1',
      kind: 'SelfSubjectReview',
    });
  const whoami = async (token: string): Promise<Json | undefined> => {
    const r = await ssr(token);
    return r.status === 201 ? r.json<Json>().status.userInfo : undefined;
  };
  const reloads = async (): Promise<string> => (await t.client.get('/metrics')).text;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'svc-authn-config-'));
    file = join(dir, 'authn.yaml');
    await writeFile(
      file,
      JSON.stringify(doc([entry({ claimMappings: { username: { claim: 'sub', prefix: 'first:' } } })])),
    );
    t = await startTestApiServer({ args: ['--authentication-config', file] });
    anon = new HttpsClient(t.server.url, t.server.caPem);
  });

  afterAll(async () => {
    await t?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('authenticates tokens of the configured issuer', async () => {
    const token = await issuer.token({ sub: 'jane' });
    const u = await waitFor('the JWT to be accepted', () => whoami(token));
    expect(u).toEqual({ username: 'first:jane', groups: ['system:authenticated'] });
    expect((await ssr(await issuer.token({ sub: 'jane', aud: 'other' }))).status).toBe(401);
  });

  it('reloads a changed file within seconds, counts it and forgets cached answers', async () => {
    const token = await issuer.token({ sub: 'jane', roles: ['dev'] });
    // The token authenticates under the old mapping first, so its answer is in the token cache.
    expect((await whoami(token))?.username).toBe('first:jane');
    await writeFile(
      file,
      JSON.stringify(
        doc([
          entry({
            claimMappings: {
              username: { expression: '"second:" + claims.sub' },
              groups: { expression: 'claims.roles' },
            },
          }),
        ]),
      ),
    );
    const success =
      /apiserver_authentication_config_controller_automatic_reloads_total\{status="success",apiserver_id_hash="sha256:[0-9a-f]+"\} 1/;
    const m = await waitFor('the reload to be counted', async () => {
      const text = await reloads();
      return success.test(text) ? text : undefined;
    });
    // Counted means in force: the cached answer of the old mapping is gone at once.
    const u = await whoami(token);
    expect(u?.username).toBe('second:jane');
    expect(u?.groups).toEqual(['dev', 'system:authenticated']);
    const ts =
      /apiserver_authentication_config_controller_automatic_reload_last_timestamp_seconds\{status="success"[^}]*\} ([\d.e+]+)/.exec(
        m,
      )?.[1];
    expect(Number(ts)).toBeGreaterThan(Date.now() / 1000 - 60);
  });

  it.each<[string, () => string]>([
    ['not YAML', () => 'jwt: ['],
    ['a duplicate issuer', () => JSON.stringify(doc([entry(), entry()]))],
    [
      'a username claim without prefix',
      () =>
        JSON.stringify(
          doc([
            { issuer: { url: 'https://x.example', audiences: ['a'] }, claimMappings: { username: { claim: 'sub' } } },
          ]),
        ),
    ],
    [
      'the service-account issuer',
      () =>
        JSON.stringify(
          doc([
            {
              issuer: { url: 'https://svc.default.svc.cluster.local', audiences: ['a'] },
              claimMappings: { username: { claim: 'sub', prefix: '' } },
            },
          ]),
        ),
    ],
    [
      'claims.email without email_verified',
      () =>
        JSON.stringify(
          doc([
            {
              issuer: { url: 'https://x.example', audiences: ['a'] },
              claimMappings: { username: { expression: 'claims.email' } },
            },
          ]),
        ),
    ],
    [
      'an anonymous section while the gate is off',
      () => JSON.stringify(doc([entry()], { anonymous: { enabled: true } })),
    ],
  ])('keeps the old config when the new file has %s', async (_what, text) => {
    const failuresBefore = Number(
      /automatic_reloads_total\{status="failure"[^}]*\} (\d+)/.exec(await reloads())?.[1] ?? 0,
    );
    await writeFile(file, text());
    await waitFor(
      'the failed reload to be counted',
      async () => {
        const n = Number(/automatic_reloads_total\{status="failure"[^}]*\} (\d+)/.exec(await reloads())?.[1] ?? 0);
        return n > failuresBefore;
      },
      { timeoutMs: 10_000, intervalMs: 100 },
    );
    expect((await whoami(await issuer.token({ sub: 'jane', roles: [] })))?.username).toBe('second:jane');
  });
});

describe('the anonymous section', () => {
  let t: TestApiServer;
  let dir: string;
  let file: string;
  let anon: HttpsClient;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'svc-authn-anon-'));
    file = join(dir, 'authn.yaml');
    await writeFile(
      file,
      JSON.stringify(
        doc([entry()], { anonymous: { enabled: true, conditions: [{ path: '/livez' }, { path: '/version' }] } }),
      ),
    );
    t = await startTestApiServer({
      args: ['--feature-gates', 'AnonymousAuthConfigurableEndpoints=true', '--authentication-config', file],
    });
    anon = new HttpsClient(t.server.url, t.server.caPem);
  });

  afterAll(async () => {
    await t?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('allows anonymous requests only for the listed paths', async () => {
    expect((await anon.get('/livez')).status).toBe(200);
    expect((await anon.get('/version?x=1')).status).toBe(200);
    expect((await anon.get('/readyz')).status).toBe(401);
    expect((await anon.get('/api/v1/namespaces')).status).toBe(401);
    // Credentials still work everywhere.
    expect((await t.client.get('/api/v1/namespaces')).status).toBe(200);
  });

  it('follows the section on reload: disabled → no anonymous requests at all', async () => {
    await writeFile(file, JSON.stringify(doc([entry()], { anonymous: { enabled: false } })));
    await waitFor('anonymous to be refused on /livez', async () => (await anon.get('/livez')).status === 401, {
      timeoutMs: 10_000,
      intervalMs: 100,
    });
    await writeFile(file, JSON.stringify(doc([entry()])));
    // Without the section, --anonymous-auth (default true) decides again.
    await waitFor('anonymous to be allowed everywhere', async () => (await anon.get('/readyz')).status === 200, {
      timeoutMs: 10_000,
      intervalMs: 100,
    });
  });
});
