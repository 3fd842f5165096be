import { group, groupSpellings, type ApiObject } from '@svc/api';
import { isJsonObject } from '@svc/machinery';
import type { CelAdmissionRequest } from './match-conditions.js';

/** The AdmissionReview versions this server sends, preferred by the webhook's list order. */
export type ReviewVersion = 'v1' | 'v1beta1';

/** The webhook's first listed version this server speaks (Kubernetes' CreateAdmissionObjects). */
export function reviewVersionFor(listed: readonly string[] | undefined): ReviewVersion | undefined {
  return (listed ?? []).find((v): v is ReviewVersion => v === 'v1' || v === 'v1beta1');
}

/**
 * An AdmissionReview request: the matched kind and resource, the request's own, the objects
 * in the matched version (`null` when absent, as Kubernetes encodes them), and the
 * operation's options.
 */
export function admissionReview(o: {
  version: ReviewVersion;
  uid: string;
  request: CelAdmissionRequest;
  object: ApiObject | undefined;
  oldObject: ApiObject | undefined;
}): Record<string, unknown> {
  const r = o.request;
  const userInfo: Record<string, unknown> = { username: r.userInfo.username };
  if (r.userInfo.uid) userInfo.uid = r.userInfo.uid;
  if (r.userInfo.groups.length > 0) userInfo.groups = r.userInfo.groups;
  if (Object.keys(r.userInfo.extra).length > 0) userInfo.extra = r.userInfo.extra;
  const request: Record<string, unknown> = {
    uid: o.uid,
    kind: r.kind,
    resource: r.resource,
  };
  if (r.subResource) request.subResource = r.subResource;
  request.requestKind = r.requestKind;
  request.requestResource = r.requestResource;
  if (r.requestSubResource) request.requestSubResource = r.requestSubResource;
  if (r.name) request.name = r.name;
  if (r.namespace) request.namespace = r.namespace;
  Object.assign(request, {
    operation: r.operation,
    userInfo,
    object: o.object ?? null,
    oldObject: o.oldObject ?? null,
    dryRun: r.dryRun,
    options: r.options ?? null,
  });
  return { kind: 'AdmissionReview', apiVersion: `${group('admission')}/${o.version}`, request };
}

/** What a webhook answered (Kubernetes' AdmissionResponse, patch types normalized). */
export interface ReviewResult {
  allowed: boolean;
  /** The JSON patch document, decoded from base64. */
  patch?: string;
  patchType?: string;
  status?: Record<string, unknown>;
  warnings: string[];
  auditAnnotations: Record<string, string>;
}

/**
 * Kubernetes' VerifyAdmissionResponse: a v1 answer must be `admission.<suffix>/v1`
 * AdmissionReview with the request's uid, a mutating webhook's patch and patchType come
 * together, a validating webhook returns neither; a v1beta1 answer is checked for neither
 * (its patch is a JSONPatch). Throws with Kubernetes' reason.
 */
export function verifyResponse(
  doc: unknown,
  o: { version: ReviewVersion; uid: string; mutating: boolean },
): ReviewResult {
  if (!isJsonObject(doc)) throw new Error(`couldn't get version/kind; json parse error: not an object`);
  const response = doc.response;
  if (!isJsonObject(response)) throw new Error('webhook response was absent');
  const patchText = typeof response.patch === 'string' ? Buffer.from(response.patch, 'base64').toString('utf8') : '';
  const hasPatchType = response.patchType !== undefined && response.patchType !== null;
  let patchType = hasPatchType ? String(response.patchType) : '';
  if (o.version === 'v1') {
    if (response.uid !== o.uid)
      throw new Error(`expected response.uid=${JSON.stringify(o.uid)}, got ${JSON.stringify(text(response.uid))}`);
    const apiVersion = text(doc.apiVersion);
    const slash = apiVersion.indexOf('/');
    const [g, v] = slash < 0 ? ['', apiVersion] : [apiVersion.slice(0, slash), apiVersion.slice(slash + 1)];
    if (!groupSpellings(group('admission')).includes(g) || v !== 'v1' || doc.kind !== 'AdmissionReview')
      throw new Error(
        `expected webhook response of ${group('admission')}/v1, Kind=AdmissionReview, got ${g}/${v}, Kind=${text(doc.kind)}`,
      );
    if (o.mutating) {
      if (patchText.length > 0 && !hasPatchType)
        throw new Error('webhook returned response.patch but not response.patchType');
      if (patchText.length === 0 && hasPatchType)
        throw new Error('webhook returned response.patchType but not response.patch');
      if (hasPatchType && patchType === '')
        throw new Error(`webhook returned invalid response.patchType of ${JSON.stringify(patchType)}`);
    } else {
      if (patchText.length > 0) throw new Error('validating webhook may not return response.patch');
      if (hasPatchType) throw new Error('validating webhook may not return response.patchType');
    }
  } else {
    patchType = o.mutating && patchText.length > 0 ? 'JSONPatch' : '';
  }
  const result: ReviewResult = {
    allowed: response.allowed === true,
    warnings: Array.isArray(response.warnings) ? response.warnings.map(text) : [],
    auditAnnotations: {},
  };
  if (o.mutating && patchText.length > 0) {
    result.patch = patchText;
    result.patchType = patchType;
  }
  if (isJsonObject(response.status)) result.status = response.status;
  if (isJsonObject(response.auditAnnotations))
    for (const [k, v] of Object.entries(response.auditAnnotations)) result.auditAnnotations[k] = text(v);
  return result;
}

function text(v: unknown): string {
  return typeof v === 'string' ? v : v === undefined || v === null ? '' : JSON.stringify(v);
}
