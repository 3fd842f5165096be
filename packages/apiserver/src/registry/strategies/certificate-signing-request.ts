import { fieldErrors, naming, type ApiObject, type FieldError } from '@svc/api';
import {
  DNS1123_LABEL_MAX_LENGTH,
  DNS1123_SUBDOMAIN_MAX_LENGTH,
  isDns1123Label,
  isDns1123Subdomain,
} from '@svc/machinery';
import { deepEqual } from '../object-utils.js';
import { nowRfc3339 } from '../store.js';
import type { Strategy, StrategyContext } from '../strategy.js';
import { certificateBundleProblem, certificateRequestProblem } from './pem.js';

interface Condition {
  type?: string;
  status?: string;
  lastUpdateTime?: string;
  lastTransitionTime?: string;
}
interface CsrSpec {
  request?: string;
  signerName?: string;
  expirationSeconds?: number;
  usages?: string[];
  username?: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}
interface CsrStatus {
  conditions?: Condition[];
  certificate?: string;
}

const specOf = (o: ApiObject): CsrSpec => (o.spec ?? {}) as CsrSpec;
const statusOf = (o: ApiObject): CsrStatus => (o.status ?? {}) as CsrStatus;
const conditionsOf = (o: ApiObject): Condition[] => statusOf(o).conditions ?? [];
const certificateOf = (o: ApiObject): string => statusOf(o).certificate ?? '';
const ofType = (o: ApiObject, type: string): Condition[] => conditionsOf(o).filter((c) => c.type === type);
const pemOf = (base64: string | undefined): string => Buffer.from(base64 ?? '', 'base64').toString('latin1');

/** Kubernetes' KeyUsage values, sorted as its error messages list them. */
export const KEY_USAGES = [
  'any',
  'cert sign',
  'client auth',
  'code signing',
  'content commitment',
  'crl sign',
  'data encipherment',
  'decipher only',
  'digital signature',
  'email protection',
  'encipher only',
  'ipsec end system',
  'ipsec tunnel',
  'ipsec user',
  'key agreement',
  'key encipherment',
  'microsoft sgc',
  'netscape sgc',
  'ocsp signing',
  's/mime',
  'server auth',
  'signing',
  'timestamping',
];

/** Condition types whose only status is True. */
const TRUE_ONLY = new Set(['Approved', 'Denied', 'Failed']);
const MIN_EXPIRATION_SECONDS = 600;
/** A domain, `/`, and a path long enough for `<namespace>.<name>` (Kubernetes' limit). */
const MAX_SIGNER_NAME_LENGTH = 2 * DNS1123_SUBDOMAIN_MAX_LENGTH + DNS1123_LABEL_MAX_LENGTH + 2;

/** Kubernetes' ValidateSignerName: `example.com/signer-name`, the path dot-separated subdomains. */
export function validateSignerName(path: string, name: string | undefined): FieldError[] {
  if (!name) return [fieldErrors.required(path)];
  const [domain = '', rest = '', ...more] = name.split('/');
  if (more.length > 0 || !name.includes('/')) {
    return [
      fieldErrors.invalid(
        path,
        name,
        "must be a fully qualified domain and path of the form 'example.com/signer-name'",
      ),
    ];
  }
  const errs: FieldError[] = [];
  if (domain.length > DNS1123_SUBDOMAIN_MAX_LENGTH)
    errs.push(fieldErrors.tooLong(path, domain, DNS1123_SUBDOMAIN_MAX_LENGTH));
  const labelErrors = (segment: string, labels: string[], check: (l: string) => string[]): FieldError[] => {
    for (const l of labels) {
      const problems = check(l);
      if (problems.length > 0)
        return problems.map((p) => fieldErrors.invalid(path, segment, `validating label ${JSON.stringify(l)}: ${p}`));
    }
    return [];
  };
  const domainLabels = domain.split('.');
  errs.push(...labelErrors(domain, domainLabels, isDns1123Label));
  if (domainLabels.length < 2)
    errs.push(fieldErrors.invalid(path, domain, 'should be a domain with at least two segments separated by dots'));
  errs.push(...labelErrors(rest, rest.split('.'), isDns1123Subdomain));
  if (name.length > MAX_SIGNER_NAME_LENGTH) errs.push(fieldErrors.tooLong(path, name, MAX_SIGNER_NAME_LENGTH));
  return errs;
}

function validateConditions(conditions: Condition[]): FieldError[] {
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  let approved = false;
  let denied = false;
  conditions.forEach((c, i) => {
    const p = `status.conditions[${i}]`;
    const type = c.type ?? '';
    if (!type) errs.push(fieldErrors.required(`${p}.type`));
    const allowed = TRUE_ONLY.has(type) ? ['True'] : ['False', 'True', 'Unknown'];
    if (!c.status) errs.push(fieldErrors.required(`${p}.status`));
    else if (!allowed.includes(c.status)) errs.push(fieldErrors.notSupported(`${p}.status`, c.status, allowed));
    if ((type === 'Approved' && denied) || (type === 'Denied' && approved)) {
      errs.push(fieldErrors.invalid(`${p}.type`, type, 'Approved and Denied conditions are mutually exclusive'));
    }
    approved ||= type === 'Approved';
    denied ||= type === 'Denied';
    if (seen.has(type)) errs.push(fieldErrors.duplicate(`${p}.type`, type));
    seen.add(type);
  });
  return errs;
}

/** Kubernetes' v1 validateCertificateSigningRequest; `certificateUnchanged` skips re-reading status.certificate. */
async function validateCsr(obj: ApiObject, certificateUnchanged: boolean): Promise<FieldError[]> {
  const spec = specOf(obj);
  const errs: FieldError[] = [];
  const requestProblem = await certificateRequestProblem(pemOf(spec.request));
  if (requestProblem) errs.push(fieldErrors.invalid('spec.request', '<request data>', requestProblem));
  const usages = spec.usages ?? [];
  if (usages.length === 0) errs.push(fieldErrors.required('spec.usages'));
  usages.forEach((u, i) => {
    if (!KEY_USAGES.includes(u)) errs.push(fieldErrors.notSupported(`spec.usages[${i}]`, u, KEY_USAGES));
    if (usages.indexOf(u) < i) errs.push(fieldErrors.duplicate(`spec.usages[${i}]`, u));
  });
  if (spec.signerName === naming().signerNames.legacyUnknown) {
    errs.push(
      fieldErrors.invalid(
        'spec.signerName',
        spec.signerName,
        'the legacy signerName is not allowed via this API version',
      ),
    );
  } else {
    errs.push(...validateSignerName('spec.signerName', spec.signerName));
  }
  if (spec.expirationSeconds !== undefined && spec.expirationSeconds < MIN_EXPIRATION_SECONDS) {
    errs.push(
      fieldErrors.invalid(
        'spec.expirationSeconds',
        spec.expirationSeconds,
        'may not specify a duration less than 600 seconds (10 minutes)',
      ),
    );
  }
  errs.push(...validateConditions(conditionsOf(obj)));
  const certificate = statusOf(obj).certificate;
  const certificateProblem =
    certificate && !certificateUnchanged ? certificateBundleProblem(pemOf(certificate)) : undefined;
  if (certificateProblem) {
    errs.push(fieldErrors.invalid('status.certificate', '<certificate data>', certificateProblem));
  }
  return errs;
}

/**
 * Kubernetes' validateCertificateSigningRequestUpdate: Approved/Denied/Failed conditions are
 * never removed; only `/approval` adds or changes Approved and Denied; only `/status` sets the
 * certificate, once. Beyond Kubernetes, the certificate goes only on a request that is
 * Approved and neither Denied nor Failed.
 */
async function validateCsrUpdate(obj: ApiObject, old: ApiObject, ctx: StrategyContext): Promise<FieldError[]> {
  const certificateChanged = certificateOf(obj) !== certificateOf(old);
  const errs = await validateCsr(obj, !certificateChanged);
  for (const type of ['Approved', 'Denied', 'Failed']) {
    const [now, before] = [ofType(obj, type), ofType(old, type)];
    const guarded = type !== 'Failed' && ctx.subresource !== 'approval';
    let change: string | undefined;
    if (now.length < before.length) change = 'remove';
    else if (guarded && now.length > before.length) change = 'add';
    else if (guarded && !deepEqual(now, before)) change = 'modify';
    if (change)
      errs.push(
        fieldErrors.forbidden(
          'status.conditions',
          `updates may not ${change} a condition of type ${JSON.stringify(type)}`,
        ),
      );
  }
  if (!certificateChanged) return errs;
  if (ctx.subresource !== 'status')
    errs.push(fieldErrors.forbidden('status.certificate', 'updates may not set certificate content'));
  else if (certificateOf(old))
    errs.push(fieldErrors.forbidden('status.certificate', 'updates may not modify existing certificate content'));
  else if (
    ofType(obj, 'Approved').length === 0 ||
    ofType(obj, 'Denied').length > 0 ||
    ofType(obj, 'Failed').length > 0
  ) {
    errs.push(
      fieldErrors.forbidden(
        'status.certificate',
        'may only be set on a request that is Approved and neither Denied nor Failed',
      ),
    );
  }
  return errs;
}

/** Fills in missing condition times: lastUpdateTime now; lastTransitionTime kept from an old condition of the same type and status, else now. */
function populateConditionTimestamps(conditions: Condition[], old: Condition[]): void {
  const now = nowRfc3339();
  for (const c of conditions) {
    c.lastUpdateTime ||= now;
    c.lastTransitionTime ||=
      old.find((o) => o.type === c.type && o.status === c.status && o.lastTransitionTime)?.lastTransitionTime ?? now;
  }
}

/** Puts the stored instances of `type` back when the write neither added nor removed any. */
function preserveConditionInstances(conditions: Condition[], old: Condition[], type: string): void {
  const at = (list: Condition[]): number[] => list.flatMap((c, i) => (c.type === type ? [i] : []));
  const [now, before] = [at(conditions), at(old)];
  if (now.length !== before.length) return;
  before.forEach((b, i) => {
    const n = now[i];
    const stored = old[b];
    if (n !== undefined && stored) conditions[n] = structuredClone(stored);
  });
}

/**
 * CertificateSigningRequests (Kubernetes' csrStrategy, csrStatusStrategy and
 * csrApprovalStrategy): the requestor comes from the request's user; spec never changes
 * after create; `/status` carries the certificate and conditions other than Approved and
 * Denied; `/approval` carries only the conditions.
 */
export const certificateSigningRequestStrategy: Strategy = {
  prepareForCreate(obj, ctx) {
    const spec = { ...specOf(obj) };
    delete spec.username;
    delete spec.uid;
    delete spec.groups;
    delete spec.extra;
    const user = ctx.user;
    if (user) {
      spec.username = user.name;
      if (user.uid) spec.uid = user.uid;
      if (user.groups.length > 0) spec.groups = [...user.groups];
      if (user.extra && Object.keys(user.extra).length > 0) spec.extra = structuredClone(user.extra);
    }
    obj.spec = spec;
    obj.status = {};
  },
  prepareForUpdate(obj, old) {
    obj.spec = structuredClone(old.spec);
  },
  prepareForStatusUpdate(obj, old) {
    const conditions = statusOf(obj).conditions;
    if (!conditions) return;
    preserveConditionInstances(conditions, conditionsOf(old), 'Approved');
    preserveConditionInstances(conditions, conditionsOf(old), 'Denied');
    populateConditionTimestamps(conditions, conditionsOf(old));
  },
  prepareForSubresourceUpdate(obj, old) {
    const next = structuredClone(old);
    if (obj.metadata.managedFields) next.metadata.managedFields = obj.metadata.managedFields;
    const { conditions } = statusOf(obj);
    const { conditions: _stored, ...rest } = statusOf(old);
    if (conditions) populateConditionTimestamps(conditions, conditionsOf(old));
    next.status = conditions ? { conditions, ...rest } : rest;
    return next;
  },
  validate: (obj) => validateCsr(obj, true),
  validateUpdate: validateCsrUpdate,
};
