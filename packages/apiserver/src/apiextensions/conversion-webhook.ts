import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { request as httpsRequest, type RequestOptions } from 'node:https';
import { fieldErrorMessage, group, internalError, type ApiObject } from '@svc/api';
import { isJsonObject, validateAnnotations, validateLabels, type JsonObject } from '@svc/machinery';
import type { CrdWebhookClientConfig } from './crd.js';

/** How long one ConversionReview may take (Kubernetes' webhook client: 30 s). */
export const CONVERSION_WEBHOOK_TIMEOUT_MS = 30_000;

/** The ConversionReview versions this server speaks, in no order of preference (the CRD's list decides). */
const REVIEW_VERSIONS = ['v1', 'v1beta1'];

/** Kubernetes' client keeps at most this much of a non-Status error body in its message. */
const MAX_ERROR_TEXT = 2048;

export interface ServiceReference {
  namespace: string;
  name: string;
  port: number;
}

/** Where a Service is reached: an address (or DNS name) and port. */
export interface ServiceAddress {
  host: string;
  port: number;
}

/** Resolves a webhook's `service` reference; throws (with the reason) when it cannot. */
export type ServiceResolver = (ref: ServiceReference) => Promise<ServiceAddress>;

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
  private readonly ca?: string;

  constructor(private readonly o: ConversionWebhookOptions) {
    this.timeoutMs = o.timeoutMs ?? CONVERSION_WEBHOOK_TIMEOUT_MS;
    const pem = Buffer.from(o.clientConfig.caBundle ?? '', 'base64').toString('utf8');
    // As Kubernetes: a whitespace-only caBundle counts as none.
    if (pem.trim()) this.ca = pem;
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
      converted = convertedObjects(await this.post(JSON.stringify(review)), { uid, reviewVersion });
    } catch (e) {
      throw internalError(`${subject} failed: ${(e as Error).message}`);
    }
    if (converted.length !== r.objects.length)
      throw internalError(`${subject} returned ${converted.length} objects, expected ${r.objects.length}`);
    return r.objects.map((original, index) =>
      checkConverted({ original, converted: converted[index], index, request: r, subject }),
    );
  }

  /** POSTs the review; resolves with the parsed 2xx answer, rejects with the reason (Go's wording where it has one). */
  private async post(body: string): Promise<unknown> {
    const cc = this.o.clientConfig;
    const timeout = `?timeout=${goDuration(this.timeoutMs)}`;
    let target: { shown: string; options: RequestOptions };
    if (cc.service) {
      const port = cc.service.port ?? 443;
      const serverName = `${cc.service.name}.${cc.service.namespace}.svc`;
      const path = (cc.service.path ?? '') + timeout;
      const shown = `https://${serverName}:${port}${path.startsWith('/') ? '' : '/'}${path}`;
      let address: ServiceAddress;
      try {
        address = await this.o.resolveService({ namespace: cc.service.namespace, name: cc.service.name, port });
      } catch (e) {
        throw new Error(`Post "${shown}": ${(e as Error).message}`, { cause: e });
      }
      target = {
        shown,
        options: {
          host: address.host,
          port: address.port,
          path: path.startsWith('/') ? path : `/${path}`,
          servername: serverName,
          headers: { Host: `${serverName}:${port}` },
        },
      };
    } else {
      const url = new URL(cc.url ?? '');
      const path = url.pathname + timeout;
      target = {
        shown: `${url.protocol}//${url.host}${path}`,
        options: { host: url.hostname.replace(/^\[(.*)\]$/, '$1'), port: Number(url.port || 443), path },
      };
    }
    const res = await this.send(target.options, body).catch((e: unknown) => {
      throw new Error(`Post "${target.shown}": ${transportMessage(e, target.options)}`, { cause: e });
    });
    if (res.status < 200 || res.status > 299) throw new Error(errorResponseMessage(res));
    try {
      return JSON.parse(res.text) as unknown;
    } catch (e) {
      throw new Error(`couldn't get version/kind; json parse error: ${(e as Error).message}`, { cause: e });
    }
  }

  private send(options: RequestOptions, body: string): Promise<HttpAnswer> {
    return new Promise((resolve, reject) => {
      const req = httpsRequest(
        {
          ...options,
          method: 'POST',
          ca: this.ca,
          headers: {
            ...options.headers,
            'Content-Type': 'application/json',
            Accept: 'application/json, */*',
            'Content-Length': String(Buffer.byteLength(body)),
          },
        },
        (res: IncomingMessage) => {
          const chunks: Buffer[] = [];
          res.on('data', (d: Buffer) => chunks.push(d));
          res.on('error', reject);
          res.on('end', () => {
            clearTimeout(timer);
            resolve({
              status: res.statusCode ?? 0,
              contentType: String(res.headers['content-type'] ?? ''),
              text: Buffer.concat(chunks).toString('utf8'),
            });
          });
        },
      );
      // The deadline covers the whole exchange, the answer's body included.
      const timer = setTimeout(() => {
        reject(new WebhookTimeout());
        req.destroy();
      }, this.timeoutMs);
      timer.unref();
      req.on('error', (e) => {
        clearTimeout(timer);
        reject(e);
      });
      req.end(body);
    });
  }
}

/**
 * Kubernetes' service resolution for webhooks (ClusterIP resolver): an ExternalName Service is
 * reached at its external name; others need the port among `spec.ports` and are reached at
 * `spec.clusterIP`. svc allocates no cluster IPs, so a Service without one is reached by its
 * DNS name `<name>.<namespace>.svc`, as Kubernetes' default service resolver does.
 */
export function resolveServiceAddress(service: ApiObject | undefined, ref: ServiceReference): ServiceAddress {
  if (!service) throw new Error(`service "${ref.name}" not found`);
  const spec = (service.spec ?? {}) as {
    type?: string;
    clusterIP?: string;
    externalName?: string;
    ports?: Array<{ port?: number }>;
  };
  const type = spec.type || 'ClusterIP';
  if (type === 'ExternalName') return { host: spec.externalName ?? '', port: ref.port };
  if (type !== 'ClusterIP' && type !== 'NodePort' && type !== 'LoadBalancer')
    throw new Error(`unsupported service type "${type}"`);
  if (spec.clusterIP === 'None') throw new Error('cannot route to service with ClusterIP "None"');
  if (!(spec.ports ?? []).some((p) => p.port === ref.port))
    throw new Error(`no service port ${ref.port} found for service "${ref.name}"`);
  return { host: spec.clusterIP || `${ref.name}.${ref.namespace}.svc`, port: ref.port };
}

interface HttpAnswer {
  status: number;
  contentType: string;
  text: string;
}

class WebhookTimeout extends Error {
  constructor() {
    super('context deadline exceeded (Client.Timeout exceeded while awaiting headers)');
  }
}

/** A connection failure in the words of Go's client where they differ from Node's. */
function transportMessage(e: unknown, o: RequestOptions): string {
  if (e instanceof WebhookTimeout) return e.message;
  const code = (e as { code?: string }).code;
  const hostPort = `${String(o.host)}:${String(o.port)}`;
  switch (code) {
    case 'ECONNREFUSED':
      return `dial tcp ${hostPort}: connect: connection refused`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `dial tcp: lookup ${String(o.host)}: no such host`;
    case 'SELF_SIGNED_CERT_IN_CHAIN':
    case 'DEPTH_ZERO_SELF_SIGNED_CERT':
    case 'UNABLE_TO_VERIFY_LEAF_SIGNATURE':
    case 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY':
      return 'tls: failed to verify certificate: x509: certificate signed by unknown authority';
    default:
      return (e as Error).message;
  }
}

/** client-go's error for a non-2xx answer: a Status' message, else its generic text by code. */
function errorResponseMessage(res: HttpAnswer): string {
  try {
    const doc = JSON.parse(res.text) as unknown;
    if (isJsonObject(doc) && doc.kind === 'Status' && typeof doc.message === 'string' && doc.message)
      return doc.message;
  } catch {
    // not JSON: the generic message below
  }
  const text = res.contentType.startsWith('text/') ? res.text.slice(0, MAX_ERROR_TEXT).trim() : 'unknown';
  switch (res.status) {
    case 400:
      return 'the server rejected our request for an unknown reason';
    case 401:
      return 'the server has asked for the client to provide credentials';
    case 403:
      return text;
    case 404:
      return 'the server could not find the requested resource';
    case 405:
      return 'the server does not allow this method on the requested resource';
    case 409:
      return 'the server reported a conflict';
    case 422:
      return 'the server rejected our request due to an error in our request';
    case 429:
      return 'the server has received too many requests and has asked us to try again later';
    case 503:
      return 'the server is currently unable to handle the request';
    case 504:
      return 'the server was unable to return a response in the time allotted, but may still be processing the request';
    default:
      return res.status >= 500
        ? `an error on the server (${JSON.stringify(text)}) has prevented the request from succeeding`
        : `the server responded with the status code ${res.status} but did not return more information`;
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

/** Go's time.Duration text for whole milliseconds (`30s`, `500ms`, `1m30s`). */
function goDuration(ms: number): string {
  if (ms < 1000) return `${ms}ms`;
  const minutes = Math.floor(ms / 60_000);
  const seconds = (ms % 60_000) / 1000;
  if (minutes === 0) return `${seconds}s`;
  return `${minutes}m${seconds}s`;
}
