// OpenID Connect against a real issuer served by the test over HTTPS (discovery, JWKS, key
// rotation): the authenticator on its own for the claim rules, then a real API server with
// the --oidc-* flags.
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
import { OidcAuthenticator, type OidcOptions } from './oidc.js';

const CLIENT = 'svc-client';
let issuer: OidcIssuer;
const stop = new AbortController();
const now = (): number => Math.floor(Date.now() / 1000);

async function authenticator(
  o: Partial<OidcOptions> = {},
  rt: { refetchCooldownMs?: number } = {},
): Promise<OidcAuthenticator> {
  const a = new OidcAuthenticator(
    {
      issuerUrl: issuer.url,
      clientId: CLIENT,
      usernameClaim: 'sub',
      requiredClaims: {},
      signingAlgs: ['RS256'],
      caPem: issuer.caPem,
      ...o,
    },
    { signal: stop.signal, ...rt },
  );
  await a.ready();
  return a;
}

beforeAll(async () => {
  issuer = await startOidcIssuer({ clientId: CLIENT, path: 'realms/test' });
});

afterAll(async () => {
  stop.abort();
  await issuer?.close();
});

describe('OidcAuthenticator', () => {
  let a: OidcAuthenticator;
  beforeAll(async () => {
    a = await authenticator({ groupsClaim: 'groups' });
  });

  it('maps sub to <issuer>#<sub> and the groups claim to groups', async () => {
    expect(await a.authenticateToken(await issuer.token({ groups: ['dev', 'ops'] }))).toEqual({
      name: `${issuer.url}#alice`,
      groups: ['dev', 'ops'],
    });
    expect(await a.authenticateToken(await issuer.token())).toEqual({ name: `${issuer.url}#alice`, groups: [] });
  });

  it('leaves tokens of other issuers and non-JWTs to other authenticators', async () => {
    expect(await a.authenticateToken(await issuer.token({ iss: 'https://other.example' }))).toBeNull();
    expect(await a.authenticateToken('abcdef.0123456789abcdef')).toBeNull();
  });

  describe('refuses', () => {
    it.each<[string, () => Promise<string>, RegExp]>([
      ['an expired token', () => issuer.token({ exp: now() - 10 }), /"exp" claim timestamp check failed/],
      ['a token not valid yet', () => issuer.token({ nbf: now() + 600 }), /"nbf" claim timestamp check failed/],
      ['a token issued in the future', () => issuer.token({ iat: now() + 600 }), /issued in the future/],
      ['a token for another client', () => issuer.token({ aud: 'someone-else' }), /unexpected "aud" claim value/],
      [
        'a token whose audiences lack the client id',
        () => issuer.token({ aud: ['a', 'b'] }),
        /unexpected "aud" claim value/,
      ],
      ['a token without exp', () => issuer.token({ exp: undefined }), /missing required "exp" claim/],
      ['a token without the username claim', () => issuer.token({ sub: undefined }), /claim sub is missing/],
      [
        'a username claim that is not a string',
        () => issuer.token({ sub: 42 }),
        /claim sub is missing or not a string/,
      ],
      ['groups that are not an array of strings', () => issuer.token({ groups: 'dev' }), /not an array of strings/],
      ['groups with a non-string entry', () => issuer.token({ groups: ['dev', 1] }), /not an array of strings/],
      [
        'a wrong signature under a published key id',
        async () =>
          issuer.sign(
            { iss: issuer.url, aud: CLIENT, sub: 'x', exp: now() + 60 },
            { key: await issuer.unpublishedKey(), kid: issuer.current.kid },
          ),
        /signature verification failed/,
      ],
      [
        'a tampered payload',
        async () => {
          const [h, , s] = (await issuer.token()).split('.');
          return `${h}.${Buffer.from(JSON.stringify({ iss: issuer.url, aud: CLIENT, sub: 'admin', exp: now() + 60 })).toString('base64url')}.${s}`;
        },
        /signature verification failed/,
      ],
      [
        'an algorithm that is not allowed',
        async () =>
          issuer.sign(
            { iss: issuer.url, aud: CLIENT, sub: 'x', exp: now() + 60 },
            { key: await issuer.unpublishedKey('ES256') },
          ),
        /alg/,
      ],
    ])('%s', async (_what, make, why) => {
      await expect(a.authenticateToken(await make())).rejects.toThrow(why);
    });
  });

  it('applies --oidc-username-prefix: unset or empty → <issuer>#, "-" → none, else the prefix', async () => {
    const token = await issuer.token({ sub: 'bob' });
    expect((await (await authenticator({ usernamePrefix: '' })).authenticateToken(token))?.name).toBe(
      `${issuer.url}#bob`,
    );
    expect((await (await authenticator({ usernamePrefix: '-' })).authenticateToken(token))?.name).toBe('bob');
    expect((await (await authenticator({ usernamePrefix: 'oidc:' })).authenticateToken(token))?.name).toBe('oidc:bob');
  });

  it('does not prefix the email claim, and needs email_verified to be true when present', async () => {
    const byEmail = await authenticator({ usernameClaim: 'email' });
    expect((await byEmail.authenticateToken(await issuer.token({ email: 'bob@example.com' })))?.name).toBe(
      'bob@example.com',
    );
    expect(
      (await byEmail.authenticateToken(await issuer.token({ email: 'bob@example.com', email_verified: true })))?.name,
    ).toBe('bob@example.com');
    await expect(
      byEmail.authenticateToken(await issuer.token({ email: 'bob@example.com', email_verified: false })),
    ).rejects.toThrow('not verified');
    expect(
      (
        await (
          await authenticator({ usernameClaim: 'email', usernamePrefix: 'mail:' })
        ).authenticateToken(await issuer.token({ email: 'x@y' }))
      )?.name,
    ).toBe('mail:x@y');
    expect(
      (
        await (
          await authenticator({ usernameClaim: 'preferred_username' })
        ).authenticateToken(await issuer.token({ preferred_username: 'bobby' }))
      )?.name,
    ).toBe(`${issuer.url}#bobby`);
  });

  it('prefixes groups with --oidc-groups-prefix', async () => {
    const g = await authenticator({ groupsClaim: 'roles', groupsPrefix: 'oidc:' });
    expect((await g.authenticateToken(await issuer.token({ roles: ['admin'] })))?.groups).toEqual(['oidc:admin']);
  });

  it('needs every --oidc-required-claim with its value', async () => {
    const r = await authenticator({ requiredClaims: { hd: 'example.com', tier: 'gold' } });
    expect((await r.authenticateToken(await issuer.token({ hd: 'example.com', tier: 'gold' })))?.name).toBe(
      `${issuer.url}#alice`,
    );
    await expect(r.authenticateToken(await issuer.token({ hd: 'example.com' }))).rejects.toThrow(
      'required claim tier not present',
    );
    await expect(r.authenticateToken(await issuer.token({ hd: 'evil.com', tier: 'gold' }))).rejects.toThrow(
      'required claim hd does not have the value "example.com"',
    );
  });

  it('accepts the algorithms of --oidc-signing-algs', async () => {
    const es = await authenticator({ signingAlgs: ['ES256'] });
    const key = await issuer.rotate({ alg: 'ES256' });
    expect((await es.authenticateToken(await issuer.token({}, { key })))?.name).toBe(`${issuer.url}#alice`);
    await expect(
      es.authenticateToken(await issuer.token({}, { key: await issuer.rotate({ alg: 'RS256' }) })),
    ).rejects.toThrow(/alg/);
  });

  it('fetches the keys again for an unknown key id (rotation), at most once per cooldown', async () => {
    const r = await authenticator({}, { refetchCooldownMs: 60_000 });
    const old = await issuer.token();
    const fetched = issuer.requests.jwks;
    for (let i = 0; i < 5; i++) expect(await r.authenticateToken(old)).not.toBeNull();
    expect(issuer.requests.jwks).toBe(fetched); // no call to the issuer per request

    const next = await issuer.rotate({ dropOld: true });
    expect((await r.authenticateToken(await issuer.token({ sub: 'rotated' }, { key: next })))?.name).toBe(
      `${issuer.url}#rotated`,
    );
    expect(issuer.requests.jwks).toBe(fetched + 1);
    // The old key is gone from the refreshed set.
    await expect(r.authenticateToken(old)).rejects.toThrow(/no applicable key found/);

    // Unknown key ids within the cooldown: no more fetches.
    const stranger = await issuer.unpublishedKey();
    for (let i = 0; i < 3; i++)
      await expect(r.authenticateToken(await issuer.token({}, { key: stranger }))).rejects.toThrow(
        /no applicable key found/,
      );
    expect(issuer.requests.jwks).toBe(fetched + 1);
  });

  it('refuses a key id unknown even after fetching again', async () => {
    const r = await authenticator({}, { refetchCooldownMs: 0 });
    const before = issuer.requests.jwks;
    await expect(r.authenticateToken(await issuer.token({}, { key: await issuer.unpublishedKey() }))).rejects.toThrow(
      /no applicable key found/,
    );
    expect(issuer.requests.jwks).toBe(before + 1);
  });

  it('keeps trying discovery until it works; refuses tokens meanwhile', async () => {
    // Stopped at the end: left running, their retries would reach the shared issuer during
    // the later tests, which count its requests.
    const mine = new AbortController();
    try {
      const errors: string[] = [];
      const wrong = new OidcAuthenticator(
        {
          issuerUrl: `${issuer.url}/`,
          clientId: CLIENT,
          usernameClaim: 'sub',
          requiredClaims: {},
          signingAlgs: ['RS256'],
          caPem: issuer.caPem,
        },
        { signal: mine.signal, onError: (m) => errors.push(m) },
      );
      await waitFor('a discovery error', () => errors.length >= 2);
      expect(errors[0]).toContain('issuer did not match the issuer returned by provider');
      await expect(wrong.authenticateToken(await issuer.token({ iss: `${issuer.url}/` }))).rejects.toThrow(
        'not initialized',
      );

      const untrusted: string[] = [];
      new OidcAuthenticator(
        { issuerUrl: issuer.url, clientId: CLIENT, usernameClaim: 'sub', requiredClaims: {}, signingAlgs: ['RS256'] },
        { signal: mine.signal, onError: (m) => untrusted.push(m) },
      )
        .ready()
        .catch(() => undefined);
      await waitFor('a TLS error without --oidc-ca-file', () => untrusted.length >= 1);
      expect(untrusted[0]).toMatch(/certificate/);
    } finally {
      mine.abort();
    }
  });
});

describe('API server with --oidc-* flags', () => {
  let t: TestApiServer;
  let dir: string;
  let anon: HttpsClient;
  const ssr = (token?: string) =>
    anon.withToken(token).post('/apis/authentication.svc.io/v1/selfsubjectreviews', {
      apiVersion: 'authentication.svc.io/v1',
      kind: 'SelfSubjectReview',
    });

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'svc-oidc-'));
    await writeFile(join(dir, 'oidc-ca.crt'), issuer.caPem);
    t = await startTestApiServer({
      args: [
        '--oidc-issuer-url',
        issuer.url,
        '--oidc-client-id',
        CLIENT,
        '--oidc-ca-file',
        join(dir, 'oidc-ca.crt'),
        '--oidc-username-claim',
        'email',
        '--oidc-groups-claim',
        'groups',
        '--oidc-groups-prefix',
        'oidc:',
        '--oidc-required-claim',
        'hd=example.com',
        '--oidc-signing-algs',
        'RS256,ES256',
      ],
    });
    anon = new HttpsClient(t.server.url, t.server.caPem);
  });

  afterAll(async () => {
    await t?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const good = (claims: Json = {}) =>
    issuer.token({ email: 'jane@example.com', hd: 'example.com', groups: ['dev'], ...claims });

  it("authenticates ID tokens once the issuer's keys are loaded, without asking the issuer per request", async () => {
    const token = await good();
    const r = await waitFor('an OIDC token to be accepted', async () => {
      const x = await ssr(token);
      return x.status === 201 ? x : undefined;
    });
    expect(r.json<Json>().status.userInfo).toEqual({
      username: 'jane@example.com',
      groups: ['oidc:dev', 'system:authenticated'],
    });
    const counts = { ...issuer.requests };
    for (let i = 0; i < 5; i++) expect((await ssr(token)).status).toBe(201);
    expect(issuer.requests).toEqual(counts);
  });

  // Before the unknown-key row below: an unknown key id uses up the JWKS refetch for 10 s.
  it('follows a key rotation at the issuer', async () => {
    const key = await issuer.rotate({ dropOld: true, alg: 'ES256' });
    const r = await ssr(await issuer.token({ email: 'rot@example.com', hd: 'example.com' }, { key }));
    expect(r.status).toBe(201);
    expect(r.json<Json>().status.userInfo.username).toBe('rot@example.com');
  });

  it.each<[string, () => Promise<string>]>([
    ['expired', () => good({ exp: now() - 5 })],
    ['for another client', () => good({ aud: 'other' })],
    ['without the required claim', () => good({ hd: undefined })],
    ['with an unverified email', () => good({ email_verified: false })],
    ['with groups that are not a list', () => good({ groups: 'dev' })],
    [
      'signed with an unknown key',
      async () =>
        issuer.token({ email: 'jane@example.com', hd: 'example.com' }, { key: await issuer.unpublishedKey() }),
    ],
  ])('refuses a token %s with 401', async (_what, make) => {
    const r = await ssr(await make());
    expect(r.status).toBe(401);
    expect(r.json<Json>().reason).toBe('Unauthorized');
  });
});
