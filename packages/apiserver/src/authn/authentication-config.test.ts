// --authentication-config at start-up: every validation rule of the spec's field table is
// refused with exit code 2 and one clear line; the flag combinations the spec forbids too.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseFlags, refusal } from '../options-testing.js';

const dir = mkdtempSync(join(tmpdir(), 'svc-authn-config-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let n = 0;
function configFile(doc: unknown): string {
  const file = join(dir, `config-${n++}.yaml`);
  writeFileSync(file, typeof doc === 'string' ? doc : JSON.stringify(doc));
  return file;
}

const API_VERSION = 'apiserver.config.svc.io/v1beta1';
const jwt = (o: Record<string, unknown> = {}) => ({
  issuer: { url: 'https://issuer.example', audiences: ['svc'] },
  claimMappings: { username: { claim: 'sub', prefix: '' } },
  ...o,
});
const config = (o: Record<string, unknown> = {}) => ({
  apiVersion: API_VERSION,
  kind: 'AuthenticationConfiguration',
  jwt: [jwt()],
  ...o,
});
const parse = parseFlags;

describe('accepted files', () => {
  it('reads the whole field table', () => {
    const doc = config({
      jwt: [
        jwt({
          issuer: {
            url: 'https://issuer.example',
            discoveryURL: 'https://discovery.example/.well-known/openid-configuration',
            audiences: ['a', 'b'],
            audienceMatchPolicy: 'MatchAny',
          },
          claimValidationRules: [
            { claim: 'hd', requiredValue: 'example.com' },
            { expression: 'claims.tier == "gold"', message: 'gold only' },
          ],
          claimMappings: {
            username: { expression: 'claims.email_verified ? claims.email : ""' },
            groups: { expression: 'claims.roles' },
            uid: { claim: 'sub' },
            extra: [{ key: 'example.com/tenant', valueExpression: 'claims.tenant' }],
          },
          userValidationRules: [{ expression: '!user.username.startsWith("system:")', message: 'no system users' }],
        }),
        jwt({
          issuer: { url: 'https://second.example', audiences: ['svc'] },
          claimMappings: { username: { claim: 'email', prefix: 'mail:' }, groups: { claim: 'groups', prefix: 'g:' } },
        }),
      ],
    });
    const o = parse('--authentication-config', configFile(doc));
    const c = o.authenticationConfig?.config;
    expect(c?.jwt).toHaveLength(2);
    expect(c?.jwt[0]?.issuer).toEqual({
      url: 'https://issuer.example',
      discoveryURL: 'https://discovery.example/.well-known/openid-configuration',
      audiences: ['a', 'b'],
      audienceMatchPolicy: 'MatchAny',
    });
    expect(c?.jwt[0]?.claimMappings.extra.map((x) => x.key)).toEqual(['example.com/tenant']);
    expect(c?.jwt[1]?.claimMappings.username).toEqual({ claim: 'email', prefix: 'mail:' });
  });

  it('reads YAML, follows --naming=kubernetes, accepts 64 authenticators', () => {
    const yaml = `apiVersion: apiserver.config.k8s.io/v1beta1
kind: AuthenticationConfiguration
jwt:
- issuer:
    url: https://issuer.example
    audiences: [svc]
  claimMappings:
    username:
      claim: sub
      prefix: ""
`;
    expect(
      parse('--naming=kubernetes', '--authentication-config', configFile(yaml)).authenticationConfig?.config.jwt,
    ).toHaveLength(1);
    const many = Array.from({ length: 64 }, (_, i) =>
      jwt({ issuer: { url: `https://i${i}.example`, audiences: ['svc'] } }),
    );
    expect(
      parse('--authentication-config', configFile(config({ jwt: many }))).authenticationConfig?.config.jwt,
    ).toHaveLength(64);
  });

  it('accepts an anonymous section with the AnonymousAuthConfigurableEndpoints gate', () => {
    const o = parse(
      '--feature-gates',
      'AnonymousAuthConfigurableEndpoints=true',
      '--authentication-config',
      configFile(config({ anonymous: { enabled: true, conditions: [{ path: '/livez' }, { path: '/readyz' }] } })),
    );
    expect(o.authenticationConfig?.config.anonymous).toEqual({
      enabled: true,
      conditions: [{ path: '/livez' }, { path: '/readyz' }],
    });
  });
});

describe('refused at start-up with exit code 2', () => {
  const sa = 'https://svc.default.svc.cluster.local';
  const many = Array.from({ length: 65 }, (_, i) =>
    jwt({ issuer: { url: `https://i${i}.example`, audiences: ['svc'] } }),
  );
  it.each<[string, unknown, RegExp]>([
    ['not YAML', 'jwt: [', /not valid YAML or JSON/],
    [
      'a wrong apiVersion',
      config({ apiVersion: 'apiserver.config.k8s.io/v1beta1' }),
      /apiVersion: Unsupported value: "apiserver.config.k8s.io\/v1beta1"/,
    ],
    ['a wrong kind', config({ kind: 'AuthorizationConfiguration' }), /kind: Unsupported value/],
    ['an unknown field', config({ jwt: [jwt({ issuers: {} })] }), /jwt\[0\]\.issuers: unknown field/],
    ['more than 64 authenticators', config({ jwt: many }), /jwt: Too many: 65: must have at most 64 items/],
    [
      'no issuer url',
      config({ jwt: [jwt({ issuer: { audiences: ['svc'] } })] }),
      /jwt\[0\]\.issuer\.url: Required value/,
    ],
    [
      'an http issuer url',
      config({ jwt: [jwt({ issuer: { url: 'http://issuer.example', audiences: ['svc'] } })] }),
      /jwt\[0\]\.issuer\.url: .*URL scheme must be https/,
    ],
    [
      'a duplicate issuer url',
      config({ jwt: [jwt(), jwt()] }),
      /jwt\[1\]\.issuer\.url: Duplicate value: "https:\/\/issuer.example"/,
    ],
    [
      'the service-account issuer',
      config({ jwt: [jwt({ issuer: { url: sa, audiences: ['svc'] } })] }),
      /jwt\[0\]\.issuer\.url: .*must not overlap with disallowed issuers/,
    ],
    [
      'a discoveryURL equal to the url',
      config({
        jwt: [
          jwt({
            issuer: { url: 'https://issuer.example', discoveryURL: 'https://issuer.example/', audiences: ['svc'] },
          }),
        ],
      }),
      /discoveryURL must be different from URL/,
    ],
    [
      'a duplicate discoveryURL',
      config({
        jwt: [
          jwt({ issuer: { url: 'https://a.example', discoveryURL: 'https://d.example', audiences: ['svc'] } }),
          jwt({ issuer: { url: 'https://b.example', discoveryURL: 'https://d.example', audiences: ['svc'] } }),
        ],
      }),
      /jwt\[1\]\.issuer\.discoveryURL: Duplicate value/,
    ],
    [
      'an http discoveryURL',
      config({
        jwt: [jwt({ issuer: { url: 'https://a.example', discoveryURL: 'http://d.example', audiences: ['svc'] } })],
      }),
      /discoveryURL: .*URL scheme must be https/,
    ],
    [
      'a certificateAuthority that is not PEM',
      config({
        jwt: [jwt({ issuer: { url: 'https://a.example', certificateAuthority: 'nope', audiences: ['svc'] } })],
      }),
      /certificateAuthority: .*does not contain any valid/,
    ],
    [
      'no audiences',
      config({ jwt: [jwt({ issuer: { url: 'https://a.example' } })] }),
      /jwt\[0\]\.issuer\.audiences: Required value/,
    ],
    [
      'an empty audience',
      config({ jwt: [jwt({ issuer: { url: 'https://a.example', audiences: [''] } })] }),
      /audiences\[0\]: Required value/,
    ],
    [
      'a duplicate audience',
      config({
        jwt: [jwt({ issuer: { url: 'https://a.example', audiences: ['x', 'x'], audienceMatchPolicy: 'MatchAny' } })],
      }),
      /audiences\[1\]: Duplicate value/,
    ],
    [
      'several audiences without MatchAny',
      config({ jwt: [jwt({ issuer: { url: 'https://a.example', audiences: ['x', 'y'] } })] }),
      /audienceMatchPolicy must be MatchAny for multiple audiences/,
    ],
    [
      'an unknown audienceMatchPolicy',
      config({
        jwt: [jwt({ issuer: { url: 'https://a.example', audiences: ['x'], audienceMatchPolicy: 'MatchAll' } })],
      }),
      /audienceMatchPolicy: Unsupported value: "MatchAll"/,
    ],
    [
      'a claim rule with claim and expression',
      config({ jwt: [jwt({ claimValidationRules: [{ claim: 'a', expression: 'true' }] })] }),
      /claimValidationRules\[0\]: Invalid value: claim and expression can't both be set/,
    ],
    [
      'a claim rule with neither',
      config({ jwt: [jwt({ claimValidationRules: [{ message: 'x' }] })] }),
      /claimValidationRules\[0\]: Required value/,
    ],
    [
      'a duplicate claim rule',
      config({
        jwt: [
          jwt({
            claimValidationRules: [
              { claim: 'a', requiredValue: 'x' },
              { claim: 'a', requiredValue: 'y' },
            ],
          }),
        ],
      }),
      /claimValidationRules\[1\]\.claim: Duplicate value/,
    ],
    [
      'an expression rule with requiredValue',
      config({ jwt: [jwt({ claimValidationRules: [{ expression: 'true', requiredValue: 'x' }] })] }),
      /requiredValue can't be set when expression is set/,
    ],
    [
      'a claim rule expression that does not compile',
      config({ jwt: [jwt({ claimValidationRules: [{ expression: 'claims.(' }] })] }),
      /claimValidationRules\[0\]\.expression: .*compilation failed/,
    ],
    ['no username mapping', config({ jwt: [jwt({ claimMappings: {} })] }), /claimMappings\.username: Required value/],
    [
      'a username claim without prefix',
      config({ jwt: [jwt({ claimMappings: { username: { claim: 'sub' } } })] }),
      /claimMappings\.username\.prefix: Required value: prefix is required when claim is set/,
    ],
    [
      'a username with claim and expression',
      config({ jwt: [jwt({ claimMappings: { username: { claim: 'sub', prefix: '', expression: 'claims.sub' } } })] }),
      /claimMappings\.username: Invalid value: claim and expression can't both be set/,
    ],
    [
      'a username expression with a prefix',
      config({ jwt: [jwt({ claimMappings: { username: { expression: 'claims.sub', prefix: 'x' } } })] }),
      /username\.prefix: Invalid value: prefix can't be set when expression is set/,
    ],
    [
      'a username expression that does not compile',
      config({ jwt: [jwt({ claimMappings: { username: { expression: '"a" +' } } })] }),
      /username\.expression: .*compilation failed/,
    ],
    [
      'a username expression that is not a string',
      config({ jwt: [jwt({ claimMappings: { username: { expression: 'claims.sub == "x"' } } })] }),
      /username\.expression: .*must evaluate to string, not bool/,
    ],
    [
      'a claim rule expression that is not a bool',
      config({ jwt: [jwt({ claimValidationRules: [{ expression: '"yes"' }] })] }),
      /claimValidationRules\[0\]\.expression: .*must evaluate to bool, not string/,
    ],
    [
      'a groups expression that is a number',
      config({
        jwt: [jwt({ claimMappings: { username: { claim: 'sub', prefix: '' }, groups: { expression: '1 + 2' } } })],
      }),
      /groups\.expression: .*must evaluate to string or list of strings, not int/,
    ],
    [
      'a user rule on an undeclared variable',
      config({ jwt: [jwt({ userValidationRules: [{ expression: 'claims.sub == "x"' }] })] }),
      /userValidationRules\[0\]\.expression: .*compilation failed/,
    ],
    [
      'claims.email without an email_verified check',
      config({ jwt: [jwt({ claimMappings: { username: { expression: 'claims.email' } } })] }),
      /claims\.email_verified must be used/,
    ],
    [
      'groups with claim and expression',
      config({
        jwt: [
          jwt({
            claimMappings: { username: { claim: 'sub', prefix: '' }, groups: { claim: 'g', expression: 'claims.g' } },
          }),
        ],
      }),
      /claimMappings\.groups: Invalid value: claim and expression can't both be set/,
    ],
    [
      'a uid with claim and expression',
      config({
        jwt: [
          jwt({
            claimMappings: { username: { claim: 'sub', prefix: '' }, uid: { claim: 'sub', expression: 'claims.sub' } },
          }),
        ],
      }),
      /claimMappings\.uid: Invalid value/,
    ],
    [
      'an extra key without a domain',
      config({
        jwt: [
          jwt({
            claimMappings: {
              username: { claim: 'sub', prefix: '' },
              extra: [{ key: 'tenant', valueExpression: 'claims.t' }],
            },
          }),
        ],
      }),
      /extra\[0\]\.key: .*must be a domain-prefixed path/,
    ],
    [
      'a duplicate extra key',
      config({
        jwt: [
          jwt({
            claimMappings: {
              username: { claim: 'sub', prefix: '' },
              extra: [
                { key: 'a.io/t', valueExpression: 'claims.t' },
                { key: 'a.io/t', valueExpression: 'claims.u' },
              ],
            },
          }),
        ],
      }),
      /extra\[1\]\.key: Duplicate value/,
    ],
    [
      'an extra without valueExpression',
      config({ jwt: [jwt({ claimMappings: { username: { claim: 'sub', prefix: '' }, extra: [{ key: 'a.io/t' }] } })] }),
      /extra\[0\]\.valueExpression: Required value/,
    ],
    [
      'a user rule without expression',
      config({ jwt: [jwt({ userValidationRules: [{ message: 'x' }] })] }),
      /userValidationRules\[0\]\.expression: Required value/,
    ],
    [
      'a user rule that does not compile',
      config({ jwt: [jwt({ userValidationRules: [{ expression: 'user.(' }] })] }),
      /userValidationRules\[0\]\.expression: .*compilation failed/,
    ],
    [
      'an anonymous section without the gate',
      config({ anonymous: { enabled: true } }),
      /anonymous: Forbidden: .*AnonymousAuthConfigurableEndpoints feature gate is disabled/,
    ],
  ])('%s', (_what, doc, why) => {
    const e = refusal(['--authentication-config', configFile(doc)]);
    expect(e.exitCode).toBe(2);
    expect(e.message).toMatch(/^error: --authentication-config: /);
    expect(e.message).not.toContain('\n');
    expect(e.message).toMatch(why);
  });

  it('lists every error of the file at once', () => {
    const e = refusal([
      '--authentication-config',
      configFile(config({ kind: 'X', jwt: [jwt({ issuer: { url: 'http://a.example' } })] })),
    ]);
    expect(e.message).toMatch(/kind: .*issuer\.url: .*issuer\.audiences: Required value/);
  });

  it.each<[string, string[], RegExp]>([
    [
      'a missing file',
      ['--authentication-config', '/nonexistent/authn.yaml'],
      /--authentication-config: .*no such file/,
    ],
    [
      'the --oidc-* flags',
      ['--oidc-issuer-url', 'https://a.example', '--oidc-client-id', 'x'],
      /--authentication-config and the --oidc-\* flags are mutually exclusive/,
    ],
    [
      'the StructuredAuthenticationConfiguration gate off',
      ['--feature-gates', 'StructuredAuthenticationConfiguration=false'],
      /StructuredAuthenticationConfiguration feature gate/,
    ],
  ])('%s', (_what, args, why) => {
    const file = args.includes('--authentication-config') ? [] : ['--authentication-config', configFile(config())];
    const e = refusal([...file, ...args]);
    expect(e.exitCode).toBe(2);
    expect(e.message).toMatch(why);
  });

  it('an anonymous section together with --anonymous-auth', () => {
    const e = refusal([
      '--feature-gates',
      'AnonymousAuthConfigurableEndpoints=true',
      '--anonymous-auth=false',
      '--authentication-config',
      configFile(config({ anonymous: { enabled: true } })),
    ]);
    expect(e.exitCode).toBe(2);
    expect(e.message).toMatch(/anonymous: Forbidden: anonymous is not supported when --anonymous-auth is set/);
  });

  it('conditions without enabled, and duplicate paths', () => {
    const gate = ['--feature-gates', 'AnonymousAuthConfigurableEndpoints=true'];
    expect(
      refusal([
        ...gate,
        '--authentication-config',
        configFile(config({ anonymous: { enabled: false, conditions: [{ path: '/livez' }] } })),
      ]).message,
    ).toMatch(/enabled should be set to true when conditions are defined/);
    expect(
      refusal([
        ...gate,
        '--authentication-config',
        configFile(config({ anonymous: { enabled: true, conditions: [{ path: '/livez' }, { path: '/livez' }] } })),
      ]).message,
    ).toMatch(/anonymous\.conditions\[1\]\.path: Duplicate value/);
  });
});
