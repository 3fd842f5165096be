import { X509Certificate } from 'node:crypto';
import { parse as parseYaml } from 'yaml';
import { compileCel, usesClaimsEmail, usesClaimsEmailVerified, type CelProgram } from './cel.js';

/** At most this many `jwt[]` authenticators in one file. */
export const MAX_JWT_AUTHENTICATORS = 64;

export interface ClaimOrExpression {
  claim?: string;
  prefix?: string;
  expression?: string;
  /** Compiled `expression`. */
  program?: CelProgram;
}

export interface ClaimValidationRule {
  claim?: string;
  requiredValue?: string;
  expression?: string;
  message?: string;
  program?: CelProgram;
}

export interface ExtraMapping {
  key: string;
  valueExpression: string;
  program: CelProgram;
}

export interface UserValidationRule {
  expression: string;
  message?: string;
  program: CelProgram;
}

/** One `jwt[]` entry, validated, with its CEL expressions compiled. */
export interface JwtAuthenticatorConfig {
  issuer: {
    url: string;
    discoveryURL?: string;
    certificateAuthority?: string;
    audiences: string[];
    audienceMatchPolicy?: 'MatchAny';
  };
  claimValidationRules: ClaimValidationRule[];
  claimMappings: {
    username: ClaimOrExpression;
    groups?: ClaimOrExpression;
    uid?: ClaimOrExpression;
    extra: ExtraMapping[];
  };
  userValidationRules: UserValidationRule[];
}

export interface AnonymousConfig {
  enabled: boolean;
  /** Empty: every path (when enabled). */
  conditions: Array<{ path: string }>;
}

/** An `AuthenticationConfiguration` document, validated. */
export interface AuthenticationConfig {
  jwt: JwtAuthenticatorConfig[];
  anonymous?: AnonymousConfig;
}

export interface AuthenticationConfigContext {
  /** `apiserver.config.<suffix>/v1beta1` under the server's naming. */
  apiVersion: string;
  /** `--service-account-issuer` values: no `jwt[].issuer.url` may equal one. */
  serviceAccountIssuers: readonly string[];
  /** Gate `AnonymousAuthConfigurableEndpoints`. */
  anonymousConfigurable: boolean;
  /** `--anonymous-auth` was given on the command line. */
  anonymousAuthFlagSet: boolean;
}

/** The file is not a valid configuration; `errors` lists every problem (field path first). */
export class AuthenticationConfigError extends Error {
  constructor(readonly errors: string[]) {
    super(errors.length === 1 ? (errors[0] ?? '') : `[${errors.join(', ')}]`);
  }
}

type Obj = Record<string, unknown>;

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Parses and validates an `AuthenticationConfiguration` (YAML or JSON) like Kubernetes does
 * (strict decoding: unknown fields are errors). Throws `AuthenticationConfigError` with all
 * errors found.
 */
export function parseAuthenticationConfig(text: string, ctx: AuthenticationConfigContext): AuthenticationConfig {
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (e) {
    throw new AuthenticationConfigError([`not valid YAML or JSON: ${(e as Error).message.split('\n')[0] ?? ''}`]);
  }
  const errs: string[] = [];
  const err = (path: string, msg: string): void => {
    errs.push(`${path}: ${msg}`);
  };
  if (!isObj(doc)) throw new AuthenticationConfigError(['the document is not an object']);
  const known = (o: Obj, path: string, keys: string[]): void => {
    for (const k of Object.keys(o)) if (!keys.includes(k)) err(path ? `${path}.${k}` : k, 'unknown field');
  };
  const str = (o: Obj, k: string, path: string): string | undefined => {
    const v = o[k];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'string') {
      err(`${path}.${k}`, `Invalid value: ${JSON.stringify(v)}: must be a string`);
      return undefined;
    }
    return v;
  };
  const list = (o: Obj, k: string, path: string): unknown[] => {
    const v = o[k];
    if (v === undefined || v === null) return [];
    if (!Array.isArray(v)) {
      err(`${path}.${k}`, 'Invalid value: must be a list');
      return [];
    }
    return v;
  };
  const compile = (
    path: string,
    expression: string,
    check: Parameters<typeof compileCel>[1],
  ): CelProgram | undefined => {
    try {
      return compileCel(expression, check);
    } catch (e) {
      err(
        path,
        `Invalid value: ${JSON.stringify(expression)}: compilation failed: ${(e as Error).message.split('\n')[0] ?? ''}`,
      );
      return undefined;
    }
  };

  const CLAIMS_BOOL = { variables: ['claims'], result: 'bool' } as const;
  const CLAIMS_STRING = { variables: ['claims'], result: 'string' } as const;
  const CLAIMS_STRINGS = { variables: ['claims'], result: 'string-or-list' } as const;
  const USER_BOOL = { variables: ['user'], result: 'bool' } as const;

  known(doc, '', ['apiVersion', 'kind', 'jwt', 'anonymous']);
  if (doc.apiVersion !== ctx.apiVersion)
    err(
      'apiVersion',
      `Unsupported value: ${JSON.stringify(doc.apiVersion)}: supported values: ${JSON.stringify(ctx.apiVersion)}`,
    );
  if (doc.kind !== 'AuthenticationConfiguration')
    err('kind', `Unsupported value: ${JSON.stringify(doc.kind)}: supported values: "AuthenticationConfiguration"`);

  const jwtItems = list(doc, 'jwt', '');
  if (jwtItems.length > MAX_JWT_AUTHENTICATORS)
    err('jwt', `Too many: ${jwtItems.length}: must have at most ${MAX_JWT_AUTHENTICATORS} items`);
  const urls = new Set<string>();
  const discoveryUrls = new Set<string>();
  const jwt: JwtAuthenticatorConfig[] = [];
  jwtItems.forEach((item, i) => {
    const p = `jwt[${i}]`;
    if (!isObj(item)) {
      err(p, 'Invalid value: must be an object');
      return;
    }
    known(item, p, ['issuer', 'claimValidationRules', 'claimMappings', 'userValidationRules']);
    const issuer = isObj(item.issuer) ? item.issuer : {};
    if (!isObj(item.issuer)) err(`${p}.issuer`, 'Required value');
    known(issuer, `${p}.issuer`, ['url', 'discoveryURL', 'certificateAuthority', 'audiences', 'audienceMatchPolicy']);
    const url = str(issuer, 'url', `${p}.issuer`) ?? '';
    if (url === '') err(`${p}.issuer.url`, 'Required value: URL is required');
    else {
      checkHttpsUrl(url, `${p}.issuer.url`, err);
      if (urls.has(url)) err(`${p}.issuer.url`, `Duplicate value: ${JSON.stringify(url)}`);
      urls.add(url);
      if (ctx.serviceAccountIssuers.includes(url))
        err(
          `${p}.issuer.url`,
          `Invalid value: ${JSON.stringify(url)}: URL must not overlap with disallowed issuers: [${ctx.serviceAccountIssuers.join(' ')}]`,
        );
    }
    const discoveryURL = str(issuer, 'discoveryURL', `${p}.issuer`);
    if (discoveryURL !== undefined && discoveryURL !== '') {
      checkHttpsUrl(discoveryURL, `${p}.issuer.discoveryURL`, err);
      if (discoveryURL.replace(/\/+$/, '') === url.replace(/\/+$/, ''))
        err(
          `${p}.issuer.discoveryURL`,
          `Invalid value: ${JSON.stringify(discoveryURL)}: discoveryURL must be different from URL`,
        );
      if (discoveryUrls.has(discoveryURL))
        err(`${p}.issuer.discoveryURL`, `Duplicate value: ${JSON.stringify(discoveryURL)}`);
      discoveryUrls.add(discoveryURL);
    }
    const ca = str(issuer, 'certificateAuthority', `${p}.issuer`);
    if (ca !== undefined && ca !== '') {
      const blocks = ca.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
      if (blocks.length === 0)
        err(
          `${p}.issuer.certificateAuthority`,
          'Invalid value: "<omitted>": data does not contain any valid RSA or ECDSA certificates',
        );
      for (const b of blocks) {
        try {
          new X509Certificate(b);
        } catch {
          err(
            `${p}.issuer.certificateAuthority`,
            'Invalid value: "<omitted>": data does not contain any valid RSA or ECDSA certificates',
          );
          break;
        }
      }
    }
    const audiences = list(issuer, 'audiences', `${p}.issuer`);
    if (audiences.length === 0)
      err(`${p}.issuer.audiences`, 'Required value: at least one issuer.audiences is required');
    const seenAud = new Set<unknown>();
    audiences.forEach((a, j) => {
      if (typeof a !== 'string' || a === '')
        err(`${p}.issuer.audiences[${j}]`, "Required value: audience can't be empty");
      else if (seenAud.has(a)) err(`${p}.issuer.audiences[${j}]`, `Duplicate value: ${JSON.stringify(a)}`);
      seenAud.add(a);
    });
    const policy = str(issuer, 'audienceMatchPolicy', `${p}.issuer`);
    if (audiences.length > 1 && policy !== 'MatchAny')
      err(
        `${p}.issuer.audienceMatchPolicy`,
        `Invalid value: ${JSON.stringify(policy ?? '')}: audienceMatchPolicy must be MatchAny for multiple audiences`,
      );
    else if (policy !== undefined && policy !== '' && policy !== 'MatchAny')
      err(
        `${p}.issuer.audienceMatchPolicy`,
        `Unsupported value: ${JSON.stringify(policy)}: supported values: "MatchAny"`,
      );

    // Every expression of this authenticator, for the email_verified rule.
    const expressions: string[] = [];
    const claimValidationRules: ClaimValidationRule[] = [];
    const ruleClaims = new Set<string>();
    list(item, 'claimValidationRules', p).forEach((r, j) => {
      const rp = `${p}.claimValidationRules[${j}]`;
      if (!isObj(r)) {
        err(rp, 'Invalid value: must be an object');
        return;
      }
      known(r, rp, ['claim', 'requiredValue', 'expression', 'message']);
      const claim = str(r, 'claim', rp);
      const requiredValue = str(r, 'requiredValue', rp);
      const expression = str(r, 'expression', rp);
      const message = str(r, 'message', rp);
      if (claim && expression) err(rp, "Invalid value: claim and expression can't both be set");
      else if (!claim && !expression) err(rp, 'Required value: claim or expression is required');
      if (claim) {
        if (message) err(`${rp}.message`, "Invalid value: message can't be set when claim is set");
        if (ruleClaims.has(claim)) err(`${rp}.claim`, `Duplicate value: ${JSON.stringify(claim)}`);
        ruleClaims.add(claim);
        claimValidationRules.push({ claim, requiredValue: requiredValue ?? '' });
      } else if (expression) {
        if (requiredValue !== undefined)
          err(`${rp}.requiredValue`, "Invalid value: requiredValue can't be set when expression is set");
        expressions.push(expression);
        const program = compile(`${rp}.expression`, expression, CLAIMS_BOOL);
        claimValidationRules.push({ expression, message, program });
      }
    });

    const cm = isObj(item.claimMappings) ? item.claimMappings : {};
    const cmp = `${p}.claimMappings`;
    known(cm, cmp, ['username', 'groups', 'uid', 'extra']);
    const mapping = (k: 'username' | 'groups' | 'uid'): ClaimOrExpression | undefined => {
      const mp = `${cmp}.${k}`;
      const v = cm[k];
      if (v === undefined || v === null) return undefined;
      if (!isObj(v)) {
        err(mp, 'Invalid value: must be an object');
        return undefined;
      }
      known(v, mp, k === 'uid' ? ['claim', 'expression'] : ['claim', 'prefix', 'expression']);
      const claim = str(v, 'claim', mp);
      const prefix = str(v, 'prefix', mp);
      const expression = str(v, 'expression', mp);
      if (claim && expression) {
        err(mp, "Invalid value: claim and expression can't both be set");
        return undefined;
      }
      if (expression) {
        if (prefix !== undefined) err(`${mp}.prefix`, "Invalid value: prefix can't be set when expression is set");
        expressions.push(expression);
        const program = compile(`${mp}.expression`, expression, k === 'groups' ? CLAIMS_STRINGS : CLAIMS_STRING);
        return { expression, program };
      }
      if (!claim) {
        if (prefix !== undefined && k !== 'username')
          err(`${mp}.prefix`, "Invalid value: prefix can't be set when claim is not set");
        return undefined;
      }
      if (k === 'username' && prefix === undefined)
        err(
          `${mp}.prefix`,
          'Required value: prefix is required when claim is set. It can be set to an empty string to disable prefixing',
        );
      return { claim, prefix };
    };
    const username = mapping('username');
    if (!username && !errs.some((e) => e.startsWith(`${cmp}.username`)))
      err(`${cmp}.username`, 'Required value: claim or expression is required');
    const groups = mapping('groups');
    const uid = mapping('uid');
    const extra: ExtraMapping[] = [];
    const extraKeys = new Set<string>();
    list(cm, 'extra', cmp).forEach((x, j) => {
      const xp = `${cmp}.extra[${j}]`;
      if (!isObj(x)) {
        err(xp, 'Invalid value: must be an object');
        return;
      }
      known(x, xp, ['key', 'valueExpression']);
      const key = str(x, 'key', xp) ?? '';
      const valueExpression = str(x, 'valueExpression', xp) ?? '';
      if (key === '') err(`${xp}.key`, 'Required value');
      else {
        if (!isDomainPrefixedPath(key))
          err(
            `${xp}.key`,
            `Invalid value: ${JSON.stringify(key)}: must be a domain-prefixed path (such as "acme.io/foo")`,
          );
        if (key !== key.toLowerCase()) err(`${xp}.key`, `Invalid value: ${JSON.stringify(key)}: key must be lowercase`);
        if (extraKeys.has(key)) err(`${xp}.key`, `Duplicate value: ${JSON.stringify(key)}`);
        extraKeys.add(key);
      }
      if (valueExpression === '') {
        err(`${xp}.valueExpression`, 'Required value: valueExpression is required');
        return;
      }
      expressions.push(valueExpression);
      const program = compile(`${xp}.valueExpression`, valueExpression, CLAIMS_STRINGS);
      if (program && key) extra.push({ key, valueExpression, program });
    });
    // Like Kubernetes: a username taken from claims.email needs an email_verified check.
    if (username?.expression && usesClaimsEmail(username.expression) && !expressions.some(usesClaimsEmailVerified)) {
      err(
        `${cmp}.username.expression`,
        'Invalid value: "claims.email": claims.email_verified must be used in claimMappings.username.expression or claimMappings.extra[*].valueExpression or claimValidationRules[*].expression when claims.email is used in claimMappings.username.expression',
      );
    }

    const userValidationRules: UserValidationRule[] = [];
    list(item, 'userValidationRules', p).forEach((r, j) => {
      const rp = `${p}.userValidationRules[${j}]`;
      if (!isObj(r)) {
        err(rp, 'Invalid value: must be an object');
        return;
      }
      known(r, rp, ['expression', 'message']);
      const expression = str(r, 'expression', rp) ?? '';
      if (expression === '') {
        err(`${rp}.expression`, 'Required value: expression is required');
        return;
      }
      const program = compile(`${rp}.expression`, expression, USER_BOOL);
      if (program) userValidationRules.push({ expression, message: str(r, 'message', rp), program });
    });

    jwt.push({
      issuer: {
        url,
        discoveryURL: discoveryURL || undefined,
        certificateAuthority: ca || undefined,
        audiences: audiences.filter((a): a is string => typeof a === 'string'),
        audienceMatchPolicy: policy === 'MatchAny' ? 'MatchAny' : undefined,
      },
      claimValidationRules,
      claimMappings: { username: username ?? {}, groups, uid, extra },
      userValidationRules,
    });
  });

  let anonymous: AnonymousConfig | undefined;
  if (doc.anonymous !== undefined && doc.anonymous !== null) {
    const a = isObj(doc.anonymous) ? doc.anonymous : {};
    if (!ctx.anonymousConfigurable)
      err(
        'anonymous',
        'Forbidden: anonymous is not supported when AnonymousAuthConfigurableEndpoints feature gate is disabled',
      );
    if (ctx.anonymousAuthFlagSet)
      err('anonymous', 'Forbidden: anonymous is not supported when --anonymous-auth is set');
    known(a, 'anonymous', ['enabled', 'conditions']);
    if (a.enabled !== undefined && typeof a.enabled !== 'boolean')
      err('anonymous.enabled', 'Invalid value: must be a boolean');
    const enabled = a.enabled === true;
    const conditions: Array<{ path: string }> = [];
    const paths = new Set<string>();
    const items = list(a, 'conditions', 'anonymous');
    if (!enabled && items.length > 0)
      err('anonymous.conditions', 'Invalid value: enabled should be set to true when conditions are defined');
    items.forEach((c, j) => {
      const cp = `anonymous.conditions[${j}]`;
      if (!isObj(c)) {
        err(cp, 'Invalid value: must be an object');
        return;
      }
      known(c, cp, ['path']);
      const path = str(c, 'path', cp) ?? '';
      if (path === '') err(`${cp}.path`, 'Required value: path is required');
      else if (paths.has(path)) err(`${cp}.path`, `Duplicate value: ${JSON.stringify(path)}`);
      else conditions.push({ path });
      paths.add(path);
    });
    anonymous = { enabled, conditions };
  }

  if (errs.length > 0) throw new AuthenticationConfigError(errs);
  return { jwt, anonymous };
}

function checkHttpsUrl(s: string, path: string, err: (path: string, msg: string) => void): void {
  let u: URL;
  try {
    u = new URL(s);
  } catch {
    err(path, `Invalid value: ${JSON.stringify(s)}: not a valid URL`);
    return;
  }
  if (u.protocol !== 'https:') err(path, `Invalid value: ${JSON.stringify(s)}: URL scheme must be https`);
  if (u.username || u.password)
    err(path, `Invalid value: ${JSON.stringify(s)}: URL must not contain a username or password`);
  if (u.search) err(path, `Invalid value: ${JSON.stringify(s)}: URL must not contain a query`);
  if (u.hash || s.includes('#')) err(path, `Invalid value: ${JSON.stringify(s)}: URL must not contain a fragment`);
}

/** `<DNS-1123 subdomain>/<path segment>` like `acme.io/foo`. */
function isDomainPrefixedPath(key: string): boolean {
  const i = key.indexOf('/');
  if (i <= 0 || i === key.length - 1) return false;
  const domain = key.slice(0, i);
  return (
    domain.length <= 253 &&
    /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/.test(domain) &&
    domain.includes('.')
  );
}
