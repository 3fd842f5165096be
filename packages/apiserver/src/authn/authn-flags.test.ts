// The authentication flags as parsed: defaults (per naming) and the combinations refused with
// exit code 2.
import { parseFlags, refusal } from '../options-testing.js';

const parse = parseFlags;

describe('defaults', () => {
  it('issues service-account tokens as https://<cluster>.default.svc.cluster.local for the issuer audience', () => {
    const o = parse();
    expect(o.serviceAccountIssuers).toEqual(['https://svc.default.svc.cluster.local']);
    expect(o.apiAudiences).toEqual(['https://svc.default.svc.cluster.local']);
    expect(o.serviceAccountLookup).toBe(true);
    expect(o.serviceAccountKeyFiles).toEqual([]);
    expect(o.serviceAccountSigningKeyFile).toBeUndefined();
    expect(o.enableBootstrapTokenAuth).toBe(false);
    expect(o.clientCaFile).toBeUndefined();
    expect(o.oidc).toBeUndefined();
    expect(o.anonymousAuth).toBe(true);
  });

  it('follows --naming=kubernetes', () => {
    expect(parse('--naming=kubernetes').serviceAccountIssuers).toEqual([
      'https://kubernetes.default.svc.cluster.local',
    ]);
  });

  it('takes audiences from the issuers unless --api-audiences is given', () => {
    const o = parse('--service-account-issuer', 'https://a.example', '--service-account-issuer', 'spiffe-like-id');
    expect(o.serviceAccountIssuers).toEqual(['https://a.example', 'spiffe-like-id']);
    expect(o.apiAudiences).toEqual(['https://a.example', 'spiffe-like-id']);
    expect(parse('--api-audiences', 'x,y', '--api-audiences', 'z').apiAudiences).toEqual(['x', 'y', 'z']);
  });

  it('defaults the token webhook to v1beta1 with a 2m0s cache, and reads the --requestheader-* flags', () => {
    const o = parse();
    expect(o.authenticationTokenWebhookConfigFile).toBeUndefined();
    expect(o.authenticationTokenWebhookVersion).toBe('v1beta1');
    expect(o.authenticationTokenWebhookCacheTtlMs).toBe(120_000);
    expect(o.requestHeader).toEqual({
      allowedNames: [],
      usernameHeaders: [],
      uidHeaders: [],
      groupHeaders: [],
      extraHeadersPrefix: [],
    });
    expect(
      parse('--authentication-token-webhook-version', 'v1', '--authentication-token-webhook-cache-ttl', '10s'),
    ).toMatchObject({
      authenticationTokenWebhookVersion: 'v1',
      authenticationTokenWebhookCacheTtlMs: 10_000,
    });
    expect(
      parse(
        '--requestheader-client-ca-file',
        '/ca.crt',
        '--requestheader-allowed-names',
        'a,b',
        '--requestheader-username-headers',
        'X-Remote-User',
        '--requestheader-uid-headers',
        'X-Remote-Uid',
        '--requestheader-group-headers',
        'X-Remote-Group',
        '--requestheader-extra-headers-prefix',
        'X-Remote-Extra-',
      ).requestHeader,
    ).toEqual({
      clientCaFile: '/ca.crt',
      allowedNames: ['a', 'b'],
      usernameHeaders: ['X-Remote-User'],
      uidHeaders: ['X-Remote-Uid'],
      groupHeaders: ['X-Remote-Group'],
      extraHeadersPrefix: ['X-Remote-Extra-'],
    });
  });

  it('repeats --service-account-key-file', () => {
    expect(
      parse('--service-account-key-file', 'a.pem', '--service-account-key-file', 'b.pem').serviceAccountKeyFiles,
    ).toEqual(['a.pem', 'b.pem']);
  });

  it('fills the OIDC defaults', () => {
    expect(parse('--oidc-issuer-url', 'https://id.example/realm', '--oidc-client-id', 'svc').oidc).toEqual({
      issuerUrl: 'https://id.example/realm',
      clientId: 'svc',
      usernameClaim: 'sub',
      usernamePrefix: undefined,
      groupsClaim: undefined,
      groupsPrefix: undefined,
      requiredClaims: {},
      caFile: undefined,
      signingAlgs: ['RS256'],
    });
  });

  it('reads every OIDC flag', () => {
    expect(
      parse(
        '--oidc-issuer-url',
        'https://id.example',
        '--oidc-client-id',
        'svc',
        '--oidc-username-claim',
        'email',
        '--oidc-username-prefix',
        '-',
        '--oidc-groups-claim',
        'groups',
        '--oidc-groups-prefix',
        'oidc:',
        '--oidc-required-claim',
        'hd=example.com',
        '--oidc-required-claim',
        'a=1,b=x=y',
        '--oidc-ca-file',
        '/ca.pem',
        '--oidc-signing-algs',
        'RS256,ES384',
      ).oidc,
    ).toEqual({
      issuerUrl: 'https://id.example',
      clientId: 'svc',
      usernameClaim: 'email',
      usernamePrefix: '-',
      groupsClaim: 'groups',
      groupsPrefix: 'oidc:',
      requiredClaims: { hd: 'example.com', a: '1', b: 'x=y' },
      caFile: '/ca.pem',
      signingAlgs: ['RS256', 'ES384'],
    });
  });
});

describe('refused with exit code 2', () => {
  it.each([
    [['--oidc-client-id', 'svc'], '--oidc-issuer-url is required when other --oidc-* flags are given'],
    [['--oidc-required-claim', 'a=b'], '--oidc-issuer-url is required when other --oidc-* flags are given'],
    [
      ['--oidc-issuer-url', 'https://id.example'],
      '--oidc-client-id must be given (and not empty) together with --oidc-issuer-url',
    ],
    [
      ['--oidc-issuer-url', 'http://id.example', '--oidc-client-id', 'svc'],
      '--oidc-issuer-url: "http://id.example" must use the https scheme',
    ],
    [
      ['--oidc-issuer-url', 'id.example', '--oidc-client-id', 'svc'],
      '--oidc-issuer-url: "id.example" is not a valid URL',
    ],
    [
      ['--oidc-issuer-url', 'https://id.example', '--oidc-client-id', 'svc', '--oidc-signing-algs', 'HS256'],
      '--oidc-signing-algs: "HS256" is not one of RS256, RS384, RS512, ES256, ES384, ES512, PS256, PS384, PS512',
    ],
    [
      ['--oidc-issuer-url', 'https://id.example', '--oidc-client-id', 'svc', '--oidc-required-claim', 'novalue'],
      '--oidc-required-claim: "novalue" must be of the form key=value',
    ],
    [
      ['--oidc-issuer-url', 'https://id.example', '--oidc-client-id', 'svc', '--oidc-username-claim', ''],
      '--oidc-username-claim must not be empty',
    ],
    [
      ['--service-account-issuer', 'http://[bad'],
      '--service-account-issuer: "http://[bad" contains a \':\' but is not a valid URL',
    ],
    [['--service-account-issuer', ''], '--service-account-issuer: must not be empty'],
    [
      ['--service-account-issuer', 'https://a', '--service-account-issuer', 'https://a'],
      '--service-account-issuer: the same issuer is given twice',
    ],
    [
      ['--service-account-jwks-uri', 'http://keys.example/jwks'],
      '--service-account-jwks-uri: "http://keys.example/jwks" must be an https URL',
    ],
  ])('%j', (args, message) => {
    const e = refusal(args);
    expect(e.exitCode).toBe(2);
    expect(e.message).toBe(`error: ${message}`);
  });

  it.each([
    ['--authentication-token-webhook-version=v2', /--authentication-token-webhook-version.*v2/],
    ['--authentication-token-webhook-cache-ttl=soon', /--authentication-token-webhook-cache-ttl/],
    ['--enable-bootstrap-token-auth=maybe', /--enable-bootstrap-token-auth.*maybe/],
    ['--service-account-lookup=perhaps', /--service-account-lookup.*perhaps/],
  ])('%s', (arg, message) => {
    const e = refusal([arg]);
    expect(e.exitCode).not.toBe(0);
    expect(e.message).toMatch(message);
  });
});
