import {
  fieldErrors,
  type ApiObject,
  type FieldError,
  type MatchCondition,
  type MutatingWebhook,
  type MutatingWebhookConfiguration,
} from '@svc/api';
import { isDns1035Label, isDns1123Subdomain, validateLabelSelector, validateQualifiedName } from '@svc/machinery';
import { compileMatchCondition } from '../../admission/webhook/match-conditions.js';
import { validateWebhookService, validateWebhookUrl } from '../../webhook/validation.js';
import { deepEqual } from '../object-utils.js';
import type { Strategy } from '../strategy.js';
import { validateRuleWithOperations } from './rule-validation.js';

/** The AdmissionReview versions this server speaks (Kubernetes' AcceptedAdmissionReviewVersions). */
export const ACCEPTED_ADMISSION_REVIEW_VERSIONS = ['v1', 'v1beta1'];
/** At most this many matchConditions per webhook. */
export const MAX_MATCH_CONDITIONS = 64;

const FAILURE_POLICIES = ['Fail', 'Ignore'];
const MATCH_POLICIES = ['Equivalent', 'Exact'];
const SIDE_EFFECTS = ['None', 'NoneOnDryRun', 'Some', 'Unknown'];
const NO_SIDE_EFFECTS = ['None', 'NoneOnDryRun'];
const REINVOCATION_POLICIES = ['IfNeeded', 'Never'];

type Kind = 'mutating' | 'validating';
type Webhook = MutatingWebhook;

const webhooksOf = (o: ApiObject): Webhook[] => (o as MutatingWebhookConfiguration).webhooks ?? [];
const present = <T>(v: T | null | undefined): v is T => v !== undefined && v !== null;

/** What Kubernetes relaxes on update when the stored object already breaks a newer rule. */
interface Options {
  kind: Kind;
  requireNoSideEffects: boolean;
  requireRecognizedAdmissionReviewVersion: boolean;
  requireUniqueWebhookNames: boolean;
  /** The matchConditions did not change: they are not compiled again. */
  ignoreMatchConditions: boolean;
}

/** Kubernetes' v1 defaults (applied on create and update, as decoding does there). */
function setDefaults(obj: ApiObject, kind: Kind): void {
  for (const h of webhooksOf(obj)) {
    if (!present(h.failurePolicy)) h.failurePolicy = 'Fail';
    if (!present(h.matchPolicy)) h.matchPolicy = 'Equivalent';
    if (!present(h.namespaceSelector)) h.namespaceSelector = {};
    if (!present(h.objectSelector)) h.objectSelector = {};
    if (!present(h.timeoutSeconds)) h.timeoutSeconds = 10;
    if (kind === 'mutating' && !present(h.reinvocationPolicy)) h.reinvocationPolicy = 'Never';
    for (const r of h.rules ?? []) if (!present(r.scope)) r.scope = '*';
    const service = h.clientConfig?.service;
    if (service && !present(service.port)) service.port = 443;
  }
}

/**
 * MutatingWebhookConfiguration and ValidatingWebhookConfiguration (Kubernetes' strategies and
 * validation.go): v1 defaults, `metadata.generation` moving when `webhooks` change, and every
 * webhook checked with Kubernetes' messages and paths. On update the rules an existing object
 * may already break (side effects, unknown review versions, duplicate names) apply only if the
 * stored object kept them, and unchanged matchConditions are not compiled again.
 */
export function webhookConfigurationStrategy(kind: Kind): Strategy {
  return {
    allowUnconditionalUpdate: false,
    prepareForCreate(obj) {
      setDefaults(obj, kind);
      obj.metadata.generation = 1;
    },
    prepareForUpdate(obj, old) {
      setDefaults(obj, kind);
      const generation = old.metadata.generation ?? 0;
      obj.metadata.generation = deepEqual(webhooksOf(obj), webhooksOf(old)) ? generation : generation + 1;
    },
    validate(obj) {
      return validateConfiguration(obj, {
        kind,
        requireNoSideEffects: true,
        requireRecognizedAdmissionReviewVersion: true,
        requireUniqueWebhookNames: true,
        ignoreMatchConditions: false,
      });
    },
    validateUpdate(obj, old) {
      const before = webhooksOf(old);
      const after = webhooksOf(obj);
      const names = before.map((h) => h.name);
      return validateConfiguration(obj, {
        kind,
        requireNoSideEffects: before.every((h) => NO_SIDE_EFFECTS.includes(h.sideEffects)),
        requireRecognizedAdmissionReviewVersion: before.every(
          (h) =>
            (h.admissionReviewVersions ?? []).length === 0 ||
            h.admissionReviewVersions.some((v) => ACCEPTED_ADMISSION_REVIEW_VERSIONS.includes(v)),
        ),
        requireUniqueWebhookNames: new Set(names).size === names.length,
        ignoreMatchConditions:
          before.length === after.length &&
          before.every((h, i) => deepEqual(h.matchConditions ?? [], after[i]?.matchConditions ?? [])),
      });
    },
  };
}

function validateConfiguration(obj: ApiObject, o: Options): FieldError[] {
  const errs: FieldError[] = [];
  const names = new Set<string>();
  webhooksOf(obj).forEach((h, i) => {
    const path = `webhooks[${i}]`;
    errs.push(...validateWebhook(h, { ...o, path }));
    errs.push(
      ...validateReviewVersions(h.admissionReviewVersions ?? [], {
        path: `${path}.admissionReviewVersions`,
        requireRecognized: o.requireRecognizedAdmissionReviewVersion,
      }),
    );
    if (o.requireUniqueWebhookNames && h.name) {
      if (names.has(h.name)) errs.push(fieldErrors.duplicate(`${path}.name`, h.name));
      else names.add(h.name);
    }
  });
  return errs;
}

function validateWebhook(h: Webhook, o: Options & { path: string }): FieldError[] {
  const { path } = o;
  const errs = validateFullyQualifiedName(h.name ?? '', `${path}.name`);
  (h.rules ?? []).forEach((r, i) => errs.push(...validateRuleWithOperations(r, `${path}.rules[${i}]`)));
  if (present(h.failurePolicy) && !FAILURE_POLICIES.includes(h.failurePolicy))
    errs.push(fieldErrors.notSupported(`${path}.failurePolicy`, h.failurePolicy, FAILURE_POLICIES));
  if (present(h.matchPolicy) && !MATCH_POLICIES.includes(h.matchPolicy))
    errs.push(fieldErrors.notSupported(`${path}.matchPolicy`, h.matchPolicy, MATCH_POLICIES));
  const sideEffects = o.requireNoSideEffects ? NO_SIDE_EFFECTS : SIDE_EFFECTS;
  if (!present(h.sideEffects))
    errs.push(fieldErrors.required(`${path}.sideEffects`, `must specify one of ${sideEffects.join(', ')}`));
  else if (!sideEffects.includes(h.sideEffects))
    errs.push(fieldErrors.notSupported(`${path}.sideEffects`, h.sideEffects, sideEffects));
  if (present(h.timeoutSeconds) && (h.timeoutSeconds > 30 || h.timeoutSeconds < 1))
    errs.push(
      fieldErrors.invalid(
        `${path}.timeoutSeconds`,
        h.timeoutSeconds,
        'the timeout value must be between 1 and 30 seconds',
      ),
    );
  if (present(h.namespaceSelector))
    errs.push(...validateLabelSelector(h.namespaceSelector, `${path}.namespaceSelector`));
  if (present(h.objectSelector)) errs.push(...validateLabelSelector(h.objectSelector, `${path}.objectSelector`));
  if (o.kind === 'mutating' && present(h.reinvocationPolicy) && !REINVOCATION_POLICIES.includes(h.reinvocationPolicy))
    errs.push(fieldErrors.notSupported(`${path}.reinvocationPolicy`, h.reinvocationPolicy, REINVOCATION_POLICIES));
  const cc = h.clientConfig ?? {};
  const cp = `${path}.clientConfig`;
  if (present(cc.url) === present(cc.service))
    errs.push(fieldErrors.required(cp, 'exactly one of url or service is required'));
  else if (present(cc.url)) errs.push(...validateWebhookUrl(cc.url, `${cp}.url`));
  else if (cc.service) errs.push(...validateWebhookService(cc.service, `${cp}.service`));
  if (!o.ignoreMatchConditions)
    errs.push(...validateMatchConditions(h.matchConditions ?? [], `${path}.matchConditions`));
  return errs;
}

/** Kubernetes' IsFullyQualifiedName: a DNS subdomain of at least three segments. */
function validateFullyQualifiedName(name: string, path: string): FieldError[] {
  if (name === '') return [fieldErrors.required(path, '')];
  const msgs = isDns1123Subdomain(name);
  if (msgs.length > 0) return [fieldErrors.invalid(path, name, msgs.join(','))];
  if (name.split('.').length < 3)
    return [fieldErrors.invalid(path, name, 'should be a domain with at least three segments separated by dots')];
  return [];
}

function validateReviewVersions(
  versions: readonly string[],
  o: { path: string; requireRecognized: boolean },
): FieldError[] {
  const accepted = ACCEPTED_ADMISSION_REVIEW_VERSIONS.join(', ');
  if (versions.length === 0) return [fieldErrors.required(o.path, `must specify one of ${accepted}`)];
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  versions.forEach((v, i) => {
    if (seen.has(v)) {
      errs.push(fieldErrors.invalid(`${o.path}[${i}]`, v, 'duplicate version'));
      return;
    }
    seen.add(v);
    for (const m of isDns1035Label(v)) errs.push(fieldErrors.invalid(`${o.path}[${i}]`, v, m));
  });
  if (o.requireRecognized && !versions.some((v) => ACCEPTED_ADMISSION_REVIEW_VERSIONS.includes(v)))
    errs.push(fieldErrors.invalid(o.path, versions, `must include at least one of ${accepted}`));
  return errs;
}

function validateMatchConditions(conditions: readonly MatchCondition[], path: string): FieldError[] {
  const errs: FieldError[] = [];
  if (conditions.length > MAX_MATCH_CONDITIONS)
    errs.push({
      path,
      type: 'FieldValueTooMany',
      value: conditions.length,
      detail: `must have at most ${MAX_MATCH_CONDITIONS} items`,
    });
  const names = new Set<string>();
  conditions.forEach((c, i) => {
    const p = `${path}[${i}]`;
    const expression = (c.expression ?? '').trim();
    if (expression === '') errs.push(fieldErrors.required(`${p}.expression`, ''));
    else {
      const compiled = compileMatchCondition(expression);
      if ('error' in compiled) errs.push(fieldErrors.invalid(`${p}.expression`, expression, compiled.error));
    }
    if (!c.name) errs.push(fieldErrors.required(`${p}.name`, ''));
    else errs.push(...validateQualifiedName(c.name, `${p}.name`));
    if (c.name) {
      if (names.has(c.name)) errs.push(fieldErrors.duplicate(`${p}.name`, c.name));
      else names.add(c.name);
    }
  });
  return errs;
}
