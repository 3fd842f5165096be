import { randomUUID } from 'node:crypto';
import { fieldErrorMessage, group, internalError, type ApiObject } from '@svc/api';
import { isJsonObject, validateAnnotations, validateLabels, type JsonObject } from '@svc/machinery';
import { WebhookClient, type ServiceResolver } from '../webhook/client.js';
import type { CrdWebhookClientConfig } from './crd.js';

/** How long one ConversionReview may take (Kubernetes' webhook client: 30 s). */
export const CONVERSION_WEBHOOK_TIMEOUT_MS = 30_000;

/** The ConversionReview versions this server speaks, in no order of preference (the CRD's list decides). */
const REVIEW_VERSIONS = ['v1', 'v1beta1'];

export interface ConversionWebhookOptions {
  clientConfig: CrdWebhookClientConfig;
  /** The CRD's `conversionReviewVersions`: the first one this server speaks is sent. */
  conversionReviewVersions: readonly string[];
  resolveService: ServiceResolver;
  /** Default `CONVERSION_WEBHOOK_TIMEOUT_MS`. */
  timeoutMs?: number;
}

export interface ConversionRequest {
  /** Objects to convert, none of them already in `desiredAPIVersion`. */
  objects: readonly ApiObject[];
  desiredAPIVersion: string;
  /** Error messages as Kubernetes words them for a list (index of the converted object) or for one object. */
  asList: boolean;
}

/**
 * A CRD's conversion webhook, as Kubernetes' webhookConverter: one ConversionReview
 * (`apiextensions.<suffix>/v1`, or v1beta1 when the CRD lists it first) per call, POSTed over
 * HTTPS to `clientConfig.url` or to the resolved `service` (TLS server name
 * `<name>.<namespace>.svc`), trusting `caBundle` when given, else the system roots.
 *
 * The answer must be 2xx, a ConversionReview of the version sent (v1: same kind and uid; v1beta1
 * is not checked for either, as Kubernetes), `result.status: Success`, with as many objects as
 * sent, each of the desired apiVersion and the same kind, name, namespace and uid. The converted
 * objects get the original metadata back except labels and annotations, which the webhook may
 * change (validated when changed). Any failure throws a 500 `InternalError` whose message is
 * Kubernetes' (`conversion webhook for <group>/<version>, Kind=<Kind> failed: ...`).
 */
export class ConversionWebhook {
  private readonly timeoutMs: number;
  private readonly client: WebhookClient;

  constructor(private readonly o: ConversionWebhookOptions) {
    this.timeoutMs = o.timeoutMs ?? CONVERSION_WEBHOOK_TIMEOUT_MS;
    this.client = new WebhookClient(o.clientConfig, o.resolveService);
  }

  async convert(r: ConversionRequest): Promise<ApiObject[]> {
    const [first] = r.objects;
    if (!first) return [];
    const subject = `conversion webhook for ${gvkString(first)}`;
    const reviewVersion = this.o.conversionReviewVersions.find((v) => REVIEW_VERSIONS.includes(v));
    if (!reviewVersion) throw internalError('no supported conversion review versions');
    const uid = randomUUID();
    const review = {
      apiVersion: `${group('apiextensions')}/${reviewVersion}`,
      kind: 'ConversionReview',
      request: { uid, desiredAPIVersion: r.desiredAPIVersion, objects: r.objects },
    };
    let converted: unknown[];
    try {
      const answer = await this.client.post(JSON.stringify(review), { timeoutMs: this.timeoutMs });
      converted = convertedObjects(answer, { uid, reviewVersion });
    } catch (e) {
      throw internalError(`${subject} failed: ${(e as Error).message}`);
    }
    if (converted.length !== r.objects.length)
      throw internalError(`${subject} returned ${converted.length} objects, expected ${r.objects.length}`);
    return r.objects.map((original, index) =>
      checkConverted({ original, converted: converted[index], index, request: r, subject }),
    );
  }
}

/** The converted objects of a successful answer; throws with Kubernetes' reason otherwise. */
function convertedObjects(doc: unknown, sent: { uid: string; reviewVersion: string }): unknown[] {
  if (!isJsonObject(doc)) throw new Error(`couldn't get version/kind; json parse error: not an object`);
  if (sent.reviewVersion === 'v1') {
    const expected = `${group('apiextensions')}/v1`;
    if (doc.apiVersion !== expected || doc.kind !== 'ConversionReview')
      throw new Error(
        `expected webhook response of ${expected}, Kind=ConversionReview, got ${gvkString({ apiVersion: doc.apiVersion, kind: doc.kind })}`,
      );
  }
  const response = doc.response;
  if (!isJsonObject(response)) throw new Error('no response provided');
  // Kubernetes does not check the uid of a v1beta1 answer.
  if (sent.reviewVersion === 'v1' && response.uid !== sent.uid)
    throw new Error(`expected response.uid=${JSON.stringify(sent.uid)}, got ${JSON.stringify(text(response.uid))}`);
  const result = isJsonObject(response.result) ? response.result : {};
  if (result.status !== 'Success') {
    const message = text(result.message);
    throw new Error(message || `response.result.status was '${text(result.status)}', not 'Success'`);
  }
  const objects = response.convertedObjects ?? [];
  if (!Array.isArray(objects)) throw new Error('response.convertedObjects must be a list');
  return objects as unknown[];
}

interface ConvertedCheck {
  original: ApiObject;
  converted: unknown;
  index: number;
  request: ConversionRequest;
  subject: string;
}

/** One converted object checked against what was sent, with the original metadata restored. */
function checkConverted(c: ConvertedCheck): ApiObject {
  const list = c.request.asList;
  const invalidObject = list
    ? `${c.subject} returned invalid converted object at index ${c.index}`
    : `${c.subject} returned invalid object at index 0`;
  const out = c.converted;
  if (!isJsonObject(out)) throw internalError(`${invalidObject}: ${unmarshalMessage(out)}`);
  if (typeof out.kind !== 'string' || !out.kind)
    throw internalError(`${invalidObject}: Object 'Kind' is missing in '${JSON.stringify(out)}'`);
  const apiVersion = text(out.apiVersion);
  if (apiVersion !== c.request.desiredAPIVersion)
    throw internalError(
      `${invalidObject}: invalid groupVersion (expected ${c.request.desiredAPIVersion}, received ${apiVersion})`,
    );
  if (out.kind !== c.original.kind)
    throw internalError(`${invalidObject}: invalid kind (expected ${c.original.kind}, received ${out.kind})`);
  const changed = identityChange(c.original, out);
  if (changed)
    throw internalError(list ? `${invalidObject}: ${changed}` : `${c.subject} returned invalid object: ${changed}`);
  try {
    return restoreMetadata(c.original, out);
  } catch (e) {
    const where = list ? `returned invalid metadata in object at index ${c.index}` : 'returned invalid metadata';
    throw internalError(`${c.subject} ${where}: ${(e as Error).message}`);
  }
}

/** Kubernetes' validateConvertedObject: the reason the identity changed, or undefined. */
function identityChange(original: ApiObject, out: JsonObject): string | undefined {
  const meta = isJsonObject(out.metadata) ? out.metadata : {};
  const checks: Array<[string, unknown, unknown]> = [
    ['kind', original.kind, out.kind],
    ['name', original.metadata.name, meta.name],
    ['namespace', original.metadata.namespace, meta.namespace],
    ['UID', original.metadata.uid, meta.uid],
  ];
  for (const [what, expected, got] of checks) {
    if (text(expected) !== text(got)) return `must have the same ${what}: ${text(expected)} != ${text(got)}`;
  }
  return undefined;
}

/**
 * The converted object with the original's metadata, except labels and annotations, which come
 * from the webhook: they must be string maps and, when changed, valid (Kubernetes'
 * restoreObjectMeta, whose annotation errors are reported under `metadata.annotation`).
 */
function restoreMetadata(original: ApiObject, out: JsonObject): ApiObject {
  if (!('metadata' in out)) throw new Error('missing metadata in converted object');
  const answered = out.metadata;
  if (!isJsonObject(answered)) throw new Error(`invalid metadata of type ${goType(answered)} in converted object`);
  const meta = structuredClone(original.metadata) as Record<string, unknown>;
  for (const field of ['labels', 'annotations'] as const) {
    const got = answered[field];
    if (got === undefined || got === null) {
      delete meta[field];
      continue;
    }
    if (!isJsonObject(got)) throw new Error(`invalid metadata.${field} of type ${goType(got)} in converted object`);
    const before = (original.metadata[field] ?? {}) as Record<string, string>;
    let changed = Object.keys(before).length !== Object.keys(got).length;
    for (const [k, v] of Object.entries(got)) {
      if (typeof v !== 'string')
        throw new Error(`metadata.${field}[${k}] must be a string, but is ${goType(v)} in converted object`);
      if (before[k] !== v) changed = true;
    }
    if (changed) {
      const values = got as Record<string, string>;
      const errs =
        field === 'labels'
          ? validateLabels(values, 'metadata.labels')
          : validateAnnotations(values, 'metadata.annotation');
      if (errs.length > 0) {
        const all = errs.map(fieldErrorMessage);
        throw new Error(all.length === 1 ? all[0] : `[${all.join(', ')}]`);
      }
    }
    meta[field] = got;
  }
  return { ...out, metadata: meta } as ApiObject;
}

/** `<group>/<version>, Kind=<Kind>` as Go prints a GroupVersionKind. */
function gvkString(o: { apiVersion?: unknown; kind?: unknown }): string {
  const apiVersion = text(o.apiVersion);
  const slash = apiVersion.indexOf('/');
  const [g, v] = slash >= 0 ? [apiVersion.slice(0, slash), apiVersion.slice(slash + 1)] : ['', apiVersion];
  return `${g}/${v}, Kind=${text(o.kind)}`;
}

function text(v: unknown): string {
  return typeof v === 'string' ? v : v === undefined || v === null ? '' : JSON.stringify(v);
}

/** Go's `%T` of a decoded JSON value. */
function goType(v: unknown): string {
  if (v === null || v === undefined) return '<nil>';
  if (Array.isArray(v)) return '[]interface {}';
  switch (typeof v) {
    case 'string':
      return 'string';
    case 'boolean':
      return 'bool';
    case 'number':
      return Number.isInteger(v) ? 'int64' : 'float64';
    default:
      return 'map[string]interface {}';
  }
}

function unmarshalMessage(v: unknown): string {
  const what = Array.isArray(v) ? 'array' : v === null ? 'null' : typeof v === 'number' ? 'number' : typeof v;
  return `json: cannot unmarshal ${what} into Go value of type map[string]interface {}`;
}
