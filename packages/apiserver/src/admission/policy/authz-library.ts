/**
 * Kubernetes' CEL authorizer library (`kubernetes.authz`) on cel-js: `authorizer.group(g)
 * .resource(r).subresource(s).namespace(ns).name(n).check(verb)`, `authorizer.path(p)
 * .check(verb)`, `authorizer.serviceAccount(ns, name)`, and a Decision's `allowed()`,
 * `reason()`, `errored()`, `error()`; `authorizer.requestResource` is the request's own
 * resource. Checks are asynchronous (they call the server's authorizer); one request's
 * identical checks are asked once (Kubernetes' caching authorizer).
 */
import type { Environment } from '@marcbachmann/cel-js';
import type { UserInfo } from '@svc/component-base';
import { isDns1123Label, isDns1123Subdomain } from '@svc/machinery';
import type { AuthorizationAttributes, Authorizer } from '../../authz/authorizer.js';

export const AUTHORIZER_TYPE = 'kubernetes.authorization.Authorizer';
const PATH_CHECK = 'kubernetes.authorization.PathCheck';
const GROUP_CHECK = 'kubernetes.authorization.GroupCheck';
const RESOURCE_CHECK = 'kubernetes.authorization.ResourceCheck';
const DECISION = 'kubernetes.authorization.Decision';

type Answer = { decision: string; reason?: string; error?: string };

/** Asks the authorizer once per distinct set of attributes (one per admission request). */
export class CachingAuthorizer {
  private readonly answers = new Map<string, Promise<Answer>>();
  constructor(private readonly inner: Authorizer) {}

  authorize(a: AuthorizationAttributes): Promise<Answer> {
    const key = JSON.stringify(a);
    let p = this.answers.get(key);
    if (!p) {
      p = this.inner.authorize(a).then(
        (r): Answer => ({ decision: r.decision, reason: r.reason ?? '' }),
        (e: unknown): Answer => ({ decision: 'noOpinion', error: (e as Error).message ?? String(e) }),
      );
      this.answers.set(key, p);
    }
    return p;
  }
}

/** The `authorizer` variable: a user and the authorizer that decides for them. */
export class CelAuthorizer {
  /** The request's resource (absent on authorizers made by `serviceAccount()`). */
  readonly requestResource?: ResourceCheck;
  constructor(
    readonly user: UserInfo,
    readonly authz: CachingAuthorizer,
    request?: Omit<ResourceAttrs, 'verb'>,
  ) {
    if (request) this.requestResource = new ResourceCheck(this, request);
  }
}

class PathCheck {
  constructor(
    readonly authorizer: CelAuthorizer,
    readonly path: string,
  ) {}
}

class GroupCheck {
  constructor(
    readonly authorizer: CelAuthorizer,
    readonly group: string,
  ) {}
}

interface ResourceAttrs {
  group: string;
  resource: string;
  subresource: string;
  namespace: string;
  name: string;
}

class ResourceCheck {
  constructor(
    readonly authorizer: CelAuthorizer,
    readonly attrs: ResourceAttrs,
  ) {}
  with(change: Partial<ResourceAttrs>): ResourceCheck {
    return new ResourceCheck(this.authorizer, { ...this.attrs, ...change });
  }
}

class Decision {
  constructor(readonly answer: Answer) {}
}

async function decide(a: CelAuthorizer, attrs: Omit<AuthorizationAttributes, 'user'>): Promise<Decision> {
  return new Decision(await a.authz.authorize({ ...attrs, user: a.user }));
}

function nonEmpty(v: string, what: string): string {
  if (v.trim() === '') throw new Error(`${what} must not be empty`);
  return v;
}

/** Kubernetes' service account user: `system:serviceaccount:<ns>:<name>` in its two groups. */
function serviceAccountUser(namespace: string, name: string): UserInfo {
  return {
    name: `system:serviceaccount:${namespace}:${name}`,
    groups: ['system:serviceaccounts', `system:serviceaccounts:${namespace}`],
  };
}

/** Registers the library's types and functions. */
export function registerAuthzLibrary(env: Environment): void {
  env.registerType(AUTHORIZER_TYPE, { ctor: CelAuthorizer, fields: { requestResource: RESOURCE_CHECK } });
  env.registerType(PATH_CHECK, { ctor: PathCheck, fields: {} });
  env.registerType(GROUP_CHECK, { ctor: GroupCheck, fields: {} });
  env.registerType(RESOURCE_CHECK, { ctor: ResourceCheck, fields: {} });
  env.registerType(DECISION, { ctor: Decision, fields: {} });
  env.registerFunction(
    `${AUTHORIZER_TYPE}.path(string): ${PATH_CHECK}`,
    (a: CelAuthorizer, p: string) => new PathCheck(a, nonEmpty(p, 'path')),
  );
  env.registerFunction(`${AUTHORIZER_TYPE}.group(string): ${GROUP_CHECK}`, (a: CelAuthorizer, g: string) => {
    return new GroupCheck(a, g);
  });
  env.registerFunction(
    `${AUTHORIZER_TYPE}.serviceAccount(string, string): ${AUTHORIZER_TYPE}`,
    (a: CelAuthorizer, namespace: string, name: string) => {
      if (isDns1123Subdomain(name).length > 0) throw new Error('Invalid service account name');
      if (isDns1123Label(namespace).length > 0) throw new Error('Invalid service account namespace');
      return new CelAuthorizer(serviceAccountUser(namespace, name), a.authz);
    },
  );
  env.registerFunction(`${GROUP_CHECK}.resource(string): ${RESOURCE_CHECK}`, (g: GroupCheck, r: string) => {
    const attrs = { group: g.group, resource: nonEmpty(r, 'resource'), subresource: '', namespace: '', name: '' };
    return new ResourceCheck(g.authorizer, attrs);
  });
  for (const field of ['subresource', 'namespace', 'name'] as const) {
    env.registerFunction(`${RESOURCE_CHECK}.${field}(string): ${RESOURCE_CHECK}`, (r: ResourceCheck, v: string) =>
      r.with({ [field]: v }),
    );
  }
  env.registerFunction(`${PATH_CHECK}.check(string): ${DECISION}`, (p: PathCheck, verb: string) =>
    decide(p.authorizer, { ...NO_RESOURCE, isResourceRequest: false, path: p.path, verb }),
  );
  env.registerFunction(`${RESOURCE_CHECK}.check(string): ${DECISION}`, (r: ResourceCheck, verb: string) =>
    decide(r.authorizer, {
      isResourceRequest: true,
      path: '',
      verb,
      apiGroup: r.attrs.group,
      apiVersion: '*',
      resource: r.attrs.resource,
      subresource: r.attrs.subresource,
      namespace: r.attrs.namespace,
      name: r.attrs.name,
    }),
  );
  env.registerFunction(`${DECISION}.allowed(): bool`, (d: Decision) => d.answer.decision === 'allow');
  env.registerFunction(`${DECISION}.reason(): string`, (d: Decision) => d.answer.reason ?? '');
  env.registerFunction(`${DECISION}.errored(): bool`, (d: Decision) => d.answer.error !== undefined);
  env.registerFunction(`${DECISION}.error(): string`, (d: Decision) => d.answer.error ?? '');
}

const NO_RESOURCE = { apiGroup: '', apiVersion: '', resource: '', subresource: '', namespace: '', name: '' };
