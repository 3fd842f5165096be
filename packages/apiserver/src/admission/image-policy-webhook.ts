import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import {
  group,
  imagePolicyKey,
  type ImageReview,
  type ImageReviewSpec,
  type ImageReviewStatus,
  type Pod,
} from '@svc/api';
import { formatDurationNs, isJsonObject, sleep } from '@svc/machinery';
import { ConfigurationError } from '../options.js';
import { loadWebhookKubeconfig, type WebhookTarget } from '../webhook/kubeconfig.js';
import type { AdmissionAttributes, AdmissionPlugin } from './admission.js';
import { admissionForbidden } from './admission-errors.js';
import type { AdmissionContext } from './plugins.js';

/** ImagePolicyWebhook's configuration, durations in milliseconds (0: that cache is off). */
export interface ImagePolicyConfig {
  target: WebhookTarget;
  allowTtlMs: number;
  denyTtlMs: number;
  /** The first wait between attempts (then 1.5 times the last, with up to 20% jitter). */
  retryBackoffMs: number;
  /** Admit (and annotate) when the backend cannot be asked. */
  defaultAllow: boolean;
}

const MS = 1_000_000n;
const SECOND = 1000n * MS;
const MINUTE = 60n * SECOND;

/** Kubernetes' normalizeConfigDuration: -1 turns off, 0 is the default, else `value × unit` within (min, max]. */
function duration(o: { value: number; unit: bigint; min: bigint; max: bigint; dflt: bigint }): bigint {
  if (o.value === -1) return 0n;
  if (o.value === 0) return o.dflt;
  const v = BigInt(o.value) * o.unit;
  if (v <= o.min || v > o.max) {
    throw new Error(
      `valid value is between ${formatDurationNs(o.min)} and ${formatDurationNs(o.max)}, got ${formatDurationNs(v)}`,
    );
  }
  return v;
}

/** The value of `key` in `o`, matched case-insensitively as Go's JSON decoder does. */
function field(o: Record<string, unknown>, key: string): unknown {
  if (key in o) return o[key];
  return Object.entries(o).find(([k]) => k.toLowerCase() === key.toLowerCase())?.[1];
}

/**
 * Reads ImagePolicyWebhook's entry of `--admission-control-config-file` (Kubernetes' format:
 * `imagePolicy: {kubeConfigFile, allowTTL (s), denyTTL (s), retryBackoff (ms), defaultAllow}`) and
 * the kubeconfig-format file it names (the backend's `server`, CA, client certificate or token).
 * No configuration, a value out of range or an unusable kubeconfig is a `ConfigurationError` (exit 2).
 */
export function parseImagePolicyConfig(raw: unknown): ImagePolicyConfig {
  const fail = (why: string): never => {
    throw new ConfigurationError(`--admission-control-config-file: ImagePolicyWebhook: ${why}`);
  };
  if (raw === undefined || raw === null) return fail('no config specified');
  if (!isJsonObject(raw)) return fail('configuration must be an object');
  const policy = field(raw, 'imagePolicy') ?? {};
  if (!isJsonObject(policy)) return fail('imagePolicy must be an object');
  const int = (key: string): number => {
    const v = field(policy, key) ?? 0;
    return typeof v === 'number' && Number.isInteger(v) ? v : fail(`imagePolicy.${key} must be an integer`);
  };
  const kubeConfigFile = field(policy, 'kubeConfigFile') ?? '';
  if (typeof kubeConfigFile !== 'string') return fail('imagePolicy.kubeConfigFile must be a string');
  const defaultAllow = field(policy, 'defaultAllow') ?? false;
  if (typeof defaultAllow !== 'boolean') return fail('imagePolicy.defaultAllow must be a boolean');
  let backoff: bigint, allow: bigint, deny: bigint;
  try {
    backoff = duration({ value: int('retryBackoff'), unit: MS, min: 1n, max: 5n * MINUTE, dflt: 500n * MS });
    allow = duration({ value: int('allowTTL'), unit: SECOND, min: SECOND, max: 30n * MINUTE, dflt: 5n * MINUTE });
    deny = duration({ value: int('denyTTL'), unit: SECOND, min: SECOND, max: 30n * MINUTE, dflt: 30n * SECOND });
  } catch (e) {
    return fail((e as Error).message);
  }
  if (kubeConfigFile === '') return fail('invalid configuration: no configuration has been provided');
  let target: WebhookTarget;
  try {
    target = loadWebhookKubeconfig(kubeConfigFile);
  } catch (e) {
    return fail((e as Error).message);
  }
  const ms = (ns: bigint): number => Number(ns / MS) + Number(ns % MS) / 1e6;
  return { target, allowTtlMs: ms(allow), denyTtlMs: ms(deny), retryBackoffMs: ms(backoff), defaultAllow };
}

/** A failed call to the backend, in client-go's words; `retry` when Kubernetes would try again. */
class BackendError extends Error {
  constructor(
    message: string,
    readonly retry: boolean,
  ) {
    super(message);
  }
}

/** How long one call may take (Kubernetes' webhook client timeout), the whole answer included. */
const CALL_TIMEOUT_MS = 30_000;
/** Kubernetes' webhook retries: five attempts, waits growing 1.5 times with up to 20% jitter. */
const ATTEMPTS = 5;
const CACHE_SIZE = 1024;

/**
 * Kubernetes' ImagePolicyWebhook, in the validating phase: a pod created or updated (or its
 * `ephemeralcontainers`) is described to a backend as an ImageReview (`imagepolicy.<suffix>/v1alpha1`:
 * the images of its containers then init containers, or its ephemeral containers; its annotations
 * whose keys contain `.image-policy.<suffix>/`; the namespace), POSTed over HTTPS to the
 * kubeconfig's server. Not allowed is a 403 `image policy webhook backend denied one or more images:
 * <reason>` (or `one or more images rejected by webhook backend`); the answer's `auditAnnotations`
 * become the request's audit annotations under `imagepolicywebhook.image-policy.<suffix>/`. Answers
 * are cached by review (allowTTL, denyTTL). A backend that cannot be asked (after retries for
 * 500, 504, 429 and reset connections) refuses the pod with the call's error, unless `defaultAllow`:
 * then the pod is admitted, annotated `alpha.image-policy.<suffix>/failed-open: "true"`, and so is
 * the request (audit annotation `.../failed-open`).
 */
export class ImagePolicyWebhook implements AdmissionPlugin {
  readonly name = 'ImagePolicyWebhook';
  /** Review spec (JSON) → answer and when it expires; least recently used dropped first. */
  private readonly cache = new Map<string, { status: ImageReviewStatus; expires: number }>();

  constructor(
    private readonly config: ImagePolicyConfig,
    private readonly o: { signal?: AbortSignal; now?: () => number } = {},
  ) {}

  private now(): number {
    return this.o.now?.() ?? Date.now();
  }

  async validate(a: AdmissionAttributes): Promise<void> {
    if ((a.operation !== 'CREATE' && a.operation !== 'UPDATE') || !a.object) return;
    if (a.resource.group !== '' || a.resource.plural !== 'pods') return;
    if (a.subresource !== '' && a.subresource !== 'ephemeralcontainers') return;
    const pod = a.object as Pod;
    const spec = pod.spec ?? { containers: [] };
    const containers =
      a.subresource === ''
        ? [...(spec.containers ?? []), ...(spec.initContainers ?? [])]
        : (spec.ephemeralContainers ?? []);
    const infix = imagePolicyKey('annotation-infix');
    const annotations = Object.fromEntries(
      Object.entries(pod.metadata.annotations ?? {})
        .filter(([k]) => k.includes(infix))
        .sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0)),
    );
    const reviewSpec: ImageReviewSpec = {};
    if (containers.length > 0) reviewSpec.containers = containers.map((c) => (c.image ? { image: c.image } : {}));
    if (Object.keys(annotations).length > 0) reviewSpec.annotations = annotations;
    if (a.namespace) reviewSpec.namespace = a.namespace;
    let status: ImageReviewStatus;
    try {
      status = await this.review(reviewSpec);
    } catch (e) {
      if (!this.config.defaultAllow) throw admissionForbidden(a, (e as Error).message);
      a.annotations[`${imagePolicyKey('audit-prefix')}failed-open`] = 'true';
      pod.metadata.annotations = { ...pod.metadata.annotations, [imagePolicyKey('failed-open')]: 'true' };
      return;
    }
    for (const [k, v] of Object.entries(status.auditAnnotations ?? {})) {
      a.annotations[`${imagePolicyKey('audit-prefix')}${k}`] = v;
    }
    if (status.allowed) return;
    throw admissionForbidden(
      a,
      status.reason
        ? `image policy webhook backend denied one or more images: ${status.reason}`
        : 'one or more images rejected by webhook backend',
    );
  }

  /** The backend's answer for `spec`, from the cache while it holds; throws when the backend cannot be asked. */
  private async review(spec: ImageReviewSpec): Promise<ImageReviewStatus> {
    const key = JSON.stringify(spec);
    const hit = this.cache.get(key);
    if (hit) {
      this.cache.delete(key);
      if (this.now() < hit.expires) {
        this.cache.set(key, hit);
        return hit.status;
      }
    }
    const status = await this.ask(spec);
    const ttl = status.allowed ? this.config.allowTtlMs : this.config.denyTtlMs;
    if (ttl > 0) {
      if (this.cache.size >= CACHE_SIZE) this.cache.delete(this.cache.keys().next().value ?? '');
      this.cache.set(key, { status, expires: this.now() + ttl });
    }
    return status;
  }

  /** One review with Kubernetes' retries; the last failure when none succeeds. */
  private async ask(spec: ImageReviewSpec): Promise<ImageReviewStatus> {
    const review: ImageReview = {
      kind: 'ImageReview',
      apiVersion: `${group('imagepolicy')}/v1alpha1`,
      metadata: { creationTimestamp: null },
      spec,
      status: { allowed: false },
    };
    const body = JSON.stringify(review);
    let wait = this.config.retryBackoffMs;
    for (let attempt = 1; ; attempt++) {
      try {
        return statusOf(await post(this.config.target, body));
      } catch (e) {
        if (!(e instanceof BackendError) || !e.retry || attempt >= ATTEMPTS || this.o.signal?.aborted) throw e;
      }
      await sleep(wait * (1 + Math.random() * 0.2), this.o.signal);
      wait *= 1.5;
    }
  }
}

/** The answer's status; Kubernetes decodes the whole ImageReview, so a non-JSON answer fails the call. */
function statusOf(text: string): ImageReviewStatus {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    throw new BackendError(`couldn't get version/kind; json parse error: ${(e as Error).message}`, false);
  }
  const status = isJsonObject(doc) && isJsonObject(doc.status) ? doc.status : {};
  const auditAnnotations = isJsonObject(status.auditAnnotations)
    ? Object.fromEntries(Object.entries(status.auditAnnotations).map(([k, v]) => [k, String(v)]))
    : undefined;
  return {
    allowed: status.allowed === true,
    reason: typeof status.reason === 'string' ? status.reason : undefined,
    auditAnnotations,
  };
}

/** POSTs `body` to the backend; resolves with a 2xx answer's text, rejects with a `BackendError`. */
function post(t: WebhookTarget, body: string): Promise<string> {
  const url = new URL(t.server);
  url.searchParams.set('timeout', `${CALL_TIMEOUT_MS / 1000}s`);
  const shown = `${url.protocol}//${url.host}${url.pathname}${url.search}`;
  const send = url.protocol === 'http:' ? httpRequest : httpsRequest;
  const headers: Record<string, string> = {
    'Content-Type': 'application/json',
    Accept: 'application/json, */*',
    'Content-Length': String(Buffer.byteLength(body)),
  };
  if (t.token) headers.Authorization = `Bearer ${t.token}`;
  return new Promise((resolve, reject) => {
    const req = send(
      url,
      {
        method: 'POST',
        headers,
        ...(url.protocol === 'https:'
          ? { ca: t.caPem, cert: t.certPem, key: t.keyPem, rejectUnauthorized: !t.insecureSkipTlsVerify }
          : {}),
      },
      (res: IncomingMessage) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', (e) => reject(new BackendError(`Post "${shown}": ${e.message}`, false)));
        res.on('end', () => {
          clearTimeout(timer);
          const text = Buffer.concat(chunks).toString('utf8');
          const code = res.statusCode ?? 0;
          if (code >= 200 && code <= 299) return resolve(text);
          const retry = code === 500 || code === 504 || code === 429 || res.headers['retry-after'] !== undefined;
          return reject(new BackendError(answerMessage(code, text, String(res.headers['content-type'] ?? '')), retry));
        });
      },
    );
    const timer = setTimeout(() => {
      reject(
        new BackendError(
          `Post "${shown}": context deadline exceeded (Client.Timeout exceeded while awaiting headers)`,
          false,
        ),
      );
      req.destroy();
    }, CALL_TIMEOUT_MS);
    timer.unref();
    req.on('error', (e: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      const hostPort = `${url.hostname}:${url.port || (url.protocol === 'https:' ? '443' : '80')}`;
      const why =
        e.code === 'ECONNREFUSED'
          ? `dial tcp ${hostPort}: connect: connection refused`
          : e.code === 'ECONNRESET'
            ? 'read: connection reset by peer'
            : e.message;
      reject(new BackendError(`Post "${shown}": ${why}`, e.code === 'ECONNRESET'));
    });
    req.end(body);
  });
}

/** client-go's error text for a non-2xx answer: a Status' message, else its words for the code. */
function answerMessage(code: number, text: string, contentType: string): string {
  try {
    const doc = JSON.parse(text) as unknown;
    if (isJsonObject(doc) && doc.kind === 'Status' && typeof doc.message === 'string' && doc.message)
      return doc.message;
  } catch {
    // not JSON
  }
  const shown = contentType.startsWith('text/') ? text.trim() : 'unknown';
  if (code === 429) return 'the server has received too many requests and has asked us to try again later';
  if (code === 504) {
    return 'the server was unable to return a response in the time allotted, but may still be processing the request';
  }
  if (code >= 500) return `an error on the server (${JSON.stringify(shown)}) has prevented the request from succeeding`;
  if (code === 401) return 'the server has asked for the client to provide credentials';
  if (code === 403) return shown;
  if (code === 404) return 'the server could not find the requested resource';
  return `the server responded with the status code ${code} but did not return more information`;
}

export function newImagePolicyWebhook(c: AdmissionContext): ImagePolicyWebhook {
  return new ImagePolicyWebhook(parseImagePolicyConfig(c.config('ImagePolicyWebhook')), { signal: c.signal });
}
