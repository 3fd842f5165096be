import {
  badRequest,
  fieldErrors,
  invalid,
  type ApiObject,
  type FieldError,
  type SubjectAccessReviewSpec,
} from '@svc/api';
import type { UserInfo } from '@svc/component-base';
import type { AuthorizationAttributes, Authorizer } from './authorizer.js';
import type { PolicyRule } from './rbac/rules.js';

/** Rules a user holds in a namespace, for SelfSubjectRulesReview. */
export interface RuleResolver {
  rulesFor(user: UserInfo, namespace: string): { rules: PolicyRule[]; incomplete: boolean; errors: string[] };
}

function attributesOf(spec: SubjectAccessReviewSpec, user: UserInfo): AuthorizationAttributes {
  const r = spec.resourceAttributes;
  if (r) {
    return {
      user,
      isResourceRequest: true,
      path: '',
      verb: r.verb ?? '',
      apiGroup: r.group ?? '',
      apiVersion: r.version ?? '',
      namespace: r.namespace ?? '',
      resource: r.resource ?? '',
      subresource: r.subresource ?? '',
      name: r.name ?? '',
    };
  }
  const n = spec.nonResourceAttributes ?? {};
  return {
    user,
    isResourceRequest: false,
    path: n.path ?? '',
    verb: n.verb ?? '',
    apiGroup: '',
    apiVersion: '',
    namespace: '',
    resource: '',
    subresource: '',
    name: '',
  };
}

function validateSpec(spec: SubjectAccessReviewSpec, self: boolean): FieldError[] {
  const errs: FieldError[] = [];
  if (!!spec.resourceAttributes === !!spec.nonResourceAttributes) {
    errs.push(
      fieldErrors.invalid(
        'spec.resourceAttributes',
        spec.resourceAttributes ?? null,
        'exactly one of nonResourceAttributes or resourceAttributes must be specified',
      ),
    );
  }
  if (!self && !spec.user && !spec.groups?.length)
    errs.push(fieldErrors.invalid('spec.user', spec.user ?? '', 'at least one of user or group must be specified'));
  return errs;
}

function gkOf(body: ApiObject): { group: string; kind: string } {
  return { group: (body.apiVersion ?? '').split('/')[0] ?? '', kind: body.kind ?? '' };
}

/** Answers the review `body`: whether `user` may do what `spec` says. */
async function review(
  body: ApiObject,
  question: { spec: SubjectAccessReviewSpec; user: UserInfo },
  authz: Authorizer,
): Promise<object> {
  const { spec, user } = question;
  const d = await authz.authorize(attributesOf(spec, user));
  const status: Record<string, unknown> = { allowed: d.decision === 'allow' };
  if (d.decision === 'deny') status.denied = true;
  if (d.reason) status.reason = d.reason;
  return {
    apiVersion: body.apiVersion,
    kind: body.kind,
    metadata: { ...body.metadata, creationTimestamp: null },
    spec,
    status,
  };
}

/** SubjectAccessReview: may the user in `spec` do what `spec` says? */
export function subjectAccessReview(body: ApiObject, authz: Authorizer): Promise<object> {
  const spec = (body.spec ?? {}) as SubjectAccessReviewSpec;
  const errs = validateSpec(spec, false);
  if (errs.length) throw invalid(gkOf(body), '', errs);
  return review(
    body,
    { spec, user: { name: spec.user ?? '', uid: spec.uid, groups: spec.groups ?? [], extra: spec.extra } },
    authz,
  );
}

/** LocalSubjectAccessReview: a SubjectAccessReview limited to the URL's namespace. */
export function localSubjectAccessReview(body: ApiObject, namespace: string, authz: Authorizer): Promise<object> {
  const spec = (body.spec ?? {}) as SubjectAccessReviewSpec;
  const errs = validateSpec(spec, false);
  if (spec.nonResourceAttributes)
    errs.push(
      fieldErrors.invalid(
        'spec.nonResourceAttributes',
        spec.nonResourceAttributes,
        'disallowed on this kind of request',
      ),
    );
  const gk = gkOf(body);
  if (errs.length) throw invalid(gk, '', errs);
  if (body.metadata.namespace && body.metadata.namespace !== namespace) {
    throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
  }
  // As Kubernetes: the namespace being reviewed must be the URL's.
  if ((spec.resourceAttributes?.namespace ?? '') !== namespace) {
    throw badRequest(`spec.resourceAttributes.namespace must match namespace: ${namespace}`);
  }
  return review(
    { ...body, metadata: { ...body.metadata, namespace } },
    { spec, user: { name: spec.user ?? '', uid: spec.uid, groups: spec.groups ?? [], extra: spec.extra } },
    authz,
  );
}

/** SelfSubjectAccessReview: may the caller do what `spec` says? */
export function selfSubjectAccessReview(body: ApiObject, user: UserInfo, authz: Authorizer): Promise<object> {
  const spec = (body.spec ?? {}) as SubjectAccessReviewSpec;
  const errs = validateSpec(spec, true);
  if (errs.length) throw invalid(gkOf(body), '', errs);
  return review(body, { spec, user }, authz);
}

/** SelfSubjectRulesReview: what the caller may do in `spec.namespace`. */
export function selfSubjectRulesReview(body: ApiObject, user: UserInfo, resolver: RuleResolver): object {
  const spec = (body.spec ?? {}) as { namespace?: string };
  const { rules, incomplete, errors } = resolver.rulesFor(user, spec.namespace ?? '');
  const resourceRules = rules
    .filter((r) => !r.nonResourceURLs?.length)
    .map((r) => ({
      verbs: r.verbs,
      apiGroups: r.apiGroups ?? [],
      resources: r.resources ?? [],
      ...(r.resourceNames?.length ? { resourceNames: r.resourceNames } : {}),
    }));
  const nonResourceRules = rules
    .filter((r) => r.nonResourceURLs?.length)
    .map((r) => ({ verbs: r.verbs, nonResourceURLs: r.nonResourceURLs ?? [] }));
  const status: Record<string, unknown> = { resourceRules, nonResourceRules, incomplete };
  if (errors.length) status.evaluationError = errors.join(', ');
  return { apiVersion: body.apiVersion, kind: body.kind, metadata: { creationTimestamp: null }, spec, status };
}
