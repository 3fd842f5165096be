import { randomUUID } from 'node:crypto';
import type { Logger } from '@svc/component-base';
import { WebhookCallError } from '../../webhook/client.js';
import type { AdmissionAttributes } from '../admission.js';
import { admissionReview, reviewVersionFor, verifyResponse, type ReviewResult } from './admission-review.js';
import { CallingWebhookError, WebhookRejection, dryRunUnsupported, rejectionStatus } from './errors.js';
import { admissionRequest, type Invocation, type Versioned } from './matching.js';

const NO_SIDE_EFFECTS = ['None', 'NoneOnDryRun'];

/** What an admission webhook's deadline reads: its own context ran out (Kubernetes' per-webhook timeout). */
const DEADLINE_MESSAGE = 'context deadline exceeded';

export interface CallInput {
  invocation: Invocation;
  attrs: AdmissionAttributes;
  versioned: Versioned;
  mutating: boolean;
  log: Logger;
}

/**
 * Calls one webhook (Kubernetes' callHook / callAttrMutatingHook up to the patch): refuses a
 * dry run for a webhook with side effects (400), POSTs the AdmissionReview in the first
 * version the webhook lists within its `timeoutSeconds`, checks the answer, records its audit
 * annotations (as `<webhook name>/<key>`) and warnings, and throws the webhook's denial.
 *
 * Throws `CallingWebhookError` when the call or the answer fails (failurePolicy decides),
 * `WebhookRejection` for a denial, and a Status error for a refused dry run.
 */
export async function callWebhook(c: CallInput): Promise<ReviewResult> {
  const { hook: h, client } = c.invocation.hook;
  const name = h.name;
  if (c.attrs.dryRun) {
    if (!h.sideEffects) throw new CallingWebhookError(name, 'Webhook SideEffects is nil', 400);
    if (!NO_SIDE_EFFECTS.includes(h.sideEffects)) throw dryRunUnsupported(name);
  }
  const version = reviewVersionFor(h.admissionReviewVersions);
  if (!version)
    throw new CallingWebhookError(
      name,
      'could not create admission objects: webhook does not accept known AdmissionReview versions (v1, v1beta1)',
      400,
    );
  const uid = randomUUID();
  const review = admissionReview({
    version,
    uid,
    request: admissionRequest(c.attrs, c.invocation.resource),
    object: c.versioned.object,
    oldObject: c.versioned.oldObject,
  });
  let answer: unknown;
  try {
    answer = await client.post(JSON.stringify(review), {
      timeoutMs: (h.timeoutSeconds ?? 10) * 1000,
      deadlineMessage: DEADLINE_MESSAGE,
    });
  } catch (e) {
    const code = e instanceof WebhookCallError ? e.code : 400;
    throw new CallingWebhookError(name, `failed to call webhook: ${(e as Error).message}`, code);
  }
  let result: ReviewResult;
  try {
    result = verifyResponse(answer, { version, uid, mutating: c.mutating });
  } catch (e) {
    throw new CallingWebhookError(name, `received invalid webhook response: ${(e as Error).message}`, 503);
  }
  for (const [k, v] of Object.entries(result.auditAnnotations)) {
    const key = `${name}/${k}`;
    const existing = c.attrs.annotations[key];
    if (existing === undefined) c.attrs.annotations[key] = v;
    else if (existing !== v)
      c.log.warn('admission webhook audit annotation already set', { webhook: name, key, value: v, existing });
  }
  c.attrs.warnings.push(...result.warnings);
  if (!result.allowed) throw new WebhookRejection(rejectionStatus(name, result.status));
  return result;
}
