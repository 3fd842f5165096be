import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import YAML from 'yaml';
import { formatDuration, parseDuration } from '@svc/machinery';
import { group, groupSpellings } from '@svc/api';

/** EncryptionConfiguration (`apiserver.config.<suffix>/v1`), decoded and defaulted. */
export interface EncryptionConfiguration {
  resources: ResourceConfiguration[];
}

export interface ResourceConfiguration {
  /** `secrets`, `deployments.apps`, `*.apps`, `*.` (the core group), `*.*`. */
  resources: string[];
  /** In order: the first encrypts, all decrypt. */
  providers: ProviderConfiguration[];
}

/** Exactly one of these is set in a valid configuration. */
export interface ProviderConfiguration {
  aesgcm?: { keys: EncryptionKey[] };
  aescbc?: { keys: EncryptionKey[] };
  secretbox?: { keys: EncryptionKey[] };
  identity?: Record<string, never>;
  kms?: KmsConfiguration;
}

export interface EncryptionKey {
  name: string;
  /** Base64 of the key. */
  secret: string;
}

export interface KmsConfiguration {
  /** `v2` (the default `v1` is Kubernetes' deprecated KMS v1, not served here). */
  apiVersion: string;
  name: string;
  /** KMS v1 only. */
  cachesize?: number;
  /** `unix:///path/to/plugin.sock`. */
  endpoint: string;
  /** Deadline of each call to the plugin (default 3s). */
  timeoutMs: number;
}

/** A read file: its configuration and a hash of its bytes (a reload compares hashes). */
export interface LoadedEncryptionConfig {
  config: EncryptionConfiguration;
  hash: string;
}

const DEFAULT_KMS_TIMEOUT_MS = 3000;
const DEFAULT_KMS_V1_CACHE_SIZE = 1000;
const AES_KEY_SIZES = [16, 24, 32];
const SECRETBOX_KEY_SIZES = [32];

/** The hash a reload compares (never the contents: keys stay inside their transformers). */
export function encryptionConfigHash(text: string | Buffer): string {
  return createHash('sha256').update(text).digest('hex');
}

/**
 * Reads, decodes (strictly: unknown fields are errors) and validates an EncryptionConfiguration
 * file. Throws an Error with Kubernetes' message: `error while parsing file: <reasons>`, the
 * validation errors as Kubernetes prints a field error list. `reload` applies the stricter rule
 * of automatic reload (unique KMS names across all versions).
 */
export function readEncryptionConfig(file: string, reload: boolean): LoadedEncryptionConfig {
  let data: Buffer;
  try {
    data = readFileSync(file);
  } catch (e) {
    throw parsing(
      `error while loading file: error reading encryption provider configuration file ${JSON.stringify(file)}: ${(e as Error).message}`,
    );
  }
  if (data.length === 0)
    throw parsing(`error while loading file: encryption provider configuration file ${JSON.stringify(file)} is empty`);
  let config: EncryptionConfiguration;
  try {
    config = decode(data.toString('utf8'));
  } catch (e) {
    throw parsing(
      `error decoding encryption provider configuration file ${JSON.stringify(file)}: ${(e as Error).message}`,
    );
  }
  const errs = validateEncryptionConfiguration(config, reload);
  if (errs.length > 0) throw parsing(aggregate(errs));
  return { config, hash: encryptionConfigHash(data) };
}

function parsing(why: string): Error {
  return new Error(`error while parsing file: ${why}`);
}

function aggregate(msgs: string[]): string {
  const unique = [...new Set(msgs)];
  return unique.length === 1 ? (unique[0] as string) : `[${unique.join(', ')}]`;
}

// --- decoding -------------------------------------------------------------------------------

type Json = unknown;

/** The document's shape: field → decoder; unknown fields are collected, wrong types throw. */
function decode(text: string): EncryptionConfiguration {
  let doc: Json;
  try {
    doc = YAML.parse(text, { uniqueKeys: true }) as Json;
  } catch (e) {
    throw new Error((e as Error).message.split('\n')[0], { cause: e });
  }
  if (!isObject(doc)) throw new Error("couldn't get version/kind; json parse error: not an object");
  const { apiVersion, kind } = doc;
  if (typeof kind !== 'string' || kind === '') throw new Error(`Object 'Kind' is missing in '${oneLine(text)}'`);
  const versions = groupSpellings(group('apiserver.config')).map((g) => `${g}/v1`);
  if (typeof apiVersion !== 'string' || !versions.includes(apiVersion) || kind !== 'EncryptionConfiguration') {
    throw new Error(
      `no kind ${JSON.stringify(kind)} is registered for version ${JSON.stringify(String(apiVersion ?? ''))}`,
    );
  }
  const unknown: string[] = [];
  const d = new Decoder(unknown);
  d.known(doc, '', ['apiVersion', 'kind', 'resources']);
  const config: EncryptionConfiguration = {
    resources: d.array(doc.resources, 'resources').map((r, i) => d.resourceConfiguration(r, `resources[${i}]`)),
  };
  if (unknown.length > 0)
    throw new Error(`strict decoding error: ${unknown.map((u) => `unknown field ${JSON.stringify(u)}`).join(', ')}`);
  return config;
}

class Decoder {
  constructor(private readonly unknown: string[]) {}

  resourceConfiguration(v: Json, path: string): ResourceConfiguration {
    const o = this.object(v, path);
    this.known(o, `${path}.`, ['resources', 'providers']);
    return {
      resources: this.strings(o.resources, `${path}.resources`),
      providers: this.array(o.providers, `${path}.providers`).map((p, i) =>
        this.provider(p, `${path}.providers[${i}]`),
      ),
    };
  }

  private provider(v: Json, path: string): ProviderConfiguration {
    const o = this.object(v, path);
    this.known(o, `${path}.`, ['aesgcm', 'aescbc', 'secretbox', 'identity', 'kms']);
    const out: ProviderConfiguration = {};
    for (const k of ['aesgcm', 'aescbc', 'secretbox'] as const) {
      if (o[k] === undefined || o[k] === null) continue;
      const c = this.object(o[k], `${path}.${k}`);
      this.known(c, `${path}.${k}.`, ['keys']);
      out[k] = {
        keys: this.array(c.keys, `${path}.${k}.keys`).map((key, i) => this.key(key, `${path}.${k}.keys[${i}]`)),
      };
    }
    if (o.identity !== undefined && o.identity !== null) {
      this.known(this.object(o.identity, `${path}.identity`), `${path}.identity.`, []);
      out.identity = {};
    }
    if (o.kms !== undefined && o.kms !== null) out.kms = this.kms(o.kms, `${path}.kms`);
    return out;
  }

  private key(v: Json, path: string): EncryptionKey {
    const o = this.object(v, path);
    this.known(o, `${path}.`, ['name', 'secret']);
    return { name: this.string(o.name, `${path}.name`), secret: this.string(o.secret, `${path}.secret`) };
  }

  private kms(v: Json, path: string): KmsConfiguration {
    const o = this.object(v, path);
    this.known(o, `${path}.`, ['apiVersion', 'name', 'cachesize', 'endpoint', 'timeout']);
    const apiVersion = this.string(o.apiVersion, `${path}.apiVersion`) || 'v1';
    let timeoutMs = DEFAULT_KMS_TIMEOUT_MS;
    if (o.timeout !== undefined && o.timeout !== null) {
      if (typeof o.timeout !== 'string')
        throw new Error(`${path}.timeout: expected a duration string, got ${describe(o.timeout)}`);
      timeoutMs = parseDuration(o.timeout);
    }
    let cachesize: number | undefined;
    if (o.cachesize !== undefined && o.cachesize !== null) {
      if (typeof o.cachesize !== 'number' || !Number.isInteger(o.cachesize) || Math.abs(o.cachesize) > 2 ** 31)
        throw new Error(`${path}.cachesize: expected an int32, got ${describe(o.cachesize)}`);
      cachesize = o.cachesize;
    } else if (apiVersion === 'v1') {
      cachesize = DEFAULT_KMS_V1_CACHE_SIZE;
    }
    const out: KmsConfiguration = {
      apiVersion,
      name: this.string(o.name, `${path}.name`),
      endpoint: this.string(o.endpoint, `${path}.endpoint`),
      timeoutMs,
    };
    if (cachesize !== undefined) out.cachesize = cachesize;
    return out;
  }

  private object(v: Json, path: string): Record<string, Json> {
    if (!isObject(v)) throw new Error(`${path}: expected an object, got ${describe(v)}`);
    return v;
  }

  array(v: Json, path: string): Json[] {
    if (v === undefined || v === null) return [];
    if (!Array.isArray(v)) throw new Error(`${path}: expected a list, got ${describe(v)}`);
    return v;
  }

  private strings(v: Json, path: string): string[] {
    return this.array(v, path).map((s, i) => this.string(s, `${path}[${i}]`));
  }

  private string(v: Json, path: string): string {
    if (v === undefined || v === null) return '';
    if (typeof v !== 'string') throw new Error(`${path}: expected a string, got ${describe(v)}`);
    return v;
  }

  known(o: Record<string, Json>, prefix: string, allowed: string[]): void {
    for (const k of Object.keys(o)) if (!allowed.includes(k)) this.unknown.push(`${prefix}${k}`);
  }
}

function isObject(v: Json): v is Record<string, Json> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function describe(v: Json): string {
  return Array.isArray(v) ? 'a list' : v === null ? 'null' : typeof v === 'object' ? 'an object' : JSON.stringify(v);
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim().slice(0, 200);
}

// --- validation (Kubernetes' rules and messages) -------------------------------------------

function required(path: string, detail: string): string {
  return `${path}: Required value: ${detail}`;
}

function invalid(path: string, value: string, detail: string): string {
  return `${path}: Invalid value: ${value}: ${detail}`;
}

/** Go's `%#v` of a string list, as Kubernetes prints such a value. */
function goStrings(list: string[]): string {
  return `[]string{${list.map((s) => JSON.stringify(s)).join(', ')}}`;
}

/** `secrets` → {group: '', resource: 'secrets'}; `deployments.apps`; `*.` → core `*`; `*.*`. */
export function parseGroupResource(s: string): { group: string; resource: string } {
  const i = s.indexOf('.');
  return i < 0 ? { group: '', resource: s } : { group: s.slice(i + 1), resource: s.slice(0, i) };
}

/** Every error of the configuration, in Kubernetes' order and words. */
export function validateEncryptionConfiguration(c: EncryptionConfiguration, reload: boolean): string[] {
  const errs: string[] = [];
  if (c.resources.length === 0) return [required('resources', 'at least one resources is required')];
  const kmsNames = new Set<string>();
  c.resources.forEach((conf, i) => {
    const r = `resources[${i}].resources`;
    const p = `resources[${i}].providers`;
    if (conf.resources.length === 0) errs.push(required(r, `at least one ${r} is required`));
    errs.push(...resourceOverlap(conf.resources, r), ...resourceNames(conf.resources, r));
    if (conf.providers.length === 0) errs.push(required(p, `at least one ${p} is required`));
    conf.providers.forEach((provider, j) => {
      const path = `${p}[${j}]`;
      errs.push(...singleProvider(provider, path));
      if (provider.kms) {
        errs.push(...kmsConfiguration(provider.kms, { path: `${path}.kms`, names: kmsNames, reload }));
        kmsNames.add(provider.kms.name);
      } else if (provider.aesgcm) {
        errs.push(...keys(provider.aesgcm.keys, `${path}.aesgcm.keys`, AES_KEY_SIZES));
      } else if (provider.aescbc) {
        errs.push(...keys(provider.aescbc.keys, `${path}.aescbc.keys`, AES_KEY_SIZES));
      } else if (provider.secretbox) {
        errs.push(...keys(provider.secretbox.keys, `${path}.secretbox.keys`, SECRETBOX_KEY_SIZES));
      }
    });
  });
  return errs;
}

function resourceOverlap(resources: string[], path: string): string[] {
  if (resources.length < 2) return [];
  const grs = resources.map(parseGroupResource);
  let duplicate = false;
  let overlap = false;
  grs.forEach((a, i) =>
    grs.forEach((b, j) => {
      if (i === j) return;
      if (a.group === b.group && a.resource === b.resource && !duplicate) {
        duplicate = true;
        return;
      }
      if (overlap) return;
      if (a.group === '*' && a.resource === '*') overlap = true;
      else if (a.group === b.group && (a.resource === '*' || b.resource === '*')) overlap = true;
    }),
  );
  const out: string[] = [];
  if (duplicate) out.push(invalid(path, goStrings(resources), 'the same resource cannot be specified multiple times'));
  if (overlap)
    out.push(
      invalid(
        path,
        goStrings(resources),
        "using overlapping resources such as 'secrets' and '*.' in the same resource list is not allowed as they will be masked",
      ),
    );
  return out;
}

function resourceNames(resources: string[], path: string): string[] {
  const events = groupSpellings(group('events'));
  const out: string[] = [];
  resources.forEach((res, j) => {
    const at = `${path}[${j}]`;
    const bad = (detail: string): void => {
      out.push(invalid(at, JSON.stringify(res), detail));
    };
    const gr = parseGroupResource(res);
    if (res.toLowerCase() !== res) bad('resource name should not contain capital letters');
    else if (res === '*')
      bad("use '*.' to encrypt all the resources from core API group or *.* to encrypt all resources");
    else if (['apiserveripinfo', 'serviceipallocations', 'servicenodeportallocations'].includes(res))
      bad('resources which do not have REST API/s cannot be encrypted');
    else if (events.includes(gr.group))
      bad(
        `'*.${gr.group}' objects are stored using the 'events' API group in etcd. Use 'events' instead in the config file`,
      );
    else if (gr.group === 'extensions') bad("'extensions' group has been removed and cannot be used for encryption");
    else if (gr.group === '*' && gr.resource !== '*')
      bad('encrypting the same resource across groups is not supported');
  });
  return out;
}

function singleProvider(p: ProviderConfiguration, path: string): string[] {
  const found = [p.kms, p.aesgcm, p.aescbc, p.secretbox, p.identity].filter((x) => x !== undefined).length;
  if (found === 0)
    return [
      invalid(
        path,
        JSON.stringify(p),
        'provider does not contain any of the expected providers: KMS, AESGCM, AESCBC, Secretbox, Identity',
      ),
    ];
  if (found > 1)
    return [
      invalid(
        path,
        redacted(p),
        'more than one provider specified in a single element, should split into different list elements',
      ),
    ];
  return [];
}

/** A provider for a message, without key material. */
function redacted(p: ProviderConfiguration): string {
  return JSON.stringify(p, (k, v: unknown) => (k === 'secret' ? 'REDACTED' : v));
}

function keys(list: EncryptionKey[], path: string, sizes: number[]): string[] {
  if (list.length === 0) return [required(path, 'at least one keys is required')];
  const out: string[] = [];
  list.forEach((key, i) => {
    const at = `${path}[${i}]`;
    if (key.name === '') out.push(required(`${at}.name`, 'name is a mandatory field for a key'));
    if (key.secret === '') {
      out.push(required(`${at}.secret`, 'secret is a mandatory field for a key'));
      return;
    }
    const secret = decodeBase64Strict(key.secret);
    if (!secret) {
      out.push(invalid(`${at}.secret`, '"REDACTED"', 'secrets must be base64 encoded'));
      return;
    }
    if (!sizes.includes(secret.length))
      out.push(
        invalid(
          `${at}.secret`,
          '"REDACTED"',
          `secret is not of the expected length, got ${secret.length}, expected one of [${sizes.join(' ')}]`,
        ),
      );
  });
  return out;
}

/** Base64 as Go's StdEncoding reads it (padding required, line breaks ignored); undefined when it is not. */
export function decodeBase64Strict(s: string): Buffer | undefined {
  const t = s.replace(/[\r\n]/g, '');
  if (!/^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(t)) return undefined;
  return Buffer.from(t, 'base64');
}

function kmsConfiguration(c: KmsConfiguration, o: { path: string; names: Set<string>; reload: boolean }): string[] {
  const out: string[] = [];
  const { path } = o;
  if (c.name === '') out.push(required(`${path}.name`, 'name is a mandatory field for a provider'));
  if (c.apiVersion !== 'v1' && c.name.includes(':'))
    out.push(
      invalid(`${path}.name`, JSON.stringify(c.name), `invalid KMS provider name ${c.name}, must not contain ':'`),
    );
  if ((o.reload || c.apiVersion !== 'v1') && o.names.has(c.name))
    out.push(
      invalid(`${path}.name`, JSON.stringify(c.name), `duplicate KMS provider name ${c.name}, names must be unique`),
    );
  if (c.timeoutMs <= 0)
    out.push(invalid(`${path}.timeout`, formatDuration(c.timeoutMs), 'timeout should be a positive value'));
  out.push(...kmsEndpoint(c.endpoint, `${path}.endpoint`));
  if (c.apiVersion !== 'v1' && c.cachesize !== undefined)
    out.push(invalid(`${path}.cachesize`, String(c.cachesize), 'cachesize is not supported in v2'));
  if (c.apiVersion === 'v1' && c.cachesize === 0)
    out.push(invalid(`${path}.cachesize`, '0', 'cachesize should be a positive value, or negative to disable'));
  if (c.apiVersion !== 'v1' && c.apiVersion !== 'v2')
    out.push(
      invalid(
        `${path}.apiVersion`,
        JSON.stringify(c.apiVersion),
        // Kubernetes' message, literally (its format names the field where the value was meant).
        'unsupported apiVersion apiVersion for KMS provider, only v1 and v2 are supported',
      ),
    );
  return out;
}

function kmsEndpoint(endpoint: string, path: string): string[] {
  if (endpoint === '') return [invalid(path, '""', 'endpoint is a mandatory field for a kms')];
  if (endpoint.startsWith(':'))
    return [
      invalid(
        path,
        JSON.stringify(endpoint),
        `invalid endpoint for kms provider, error: parse ${JSON.stringify(endpoint)}: missing protocol scheme`,
      ),
    ];
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(endpoint)?.[1]?.toLowerCase() ?? '';
  if (scheme !== 'unix')
    return [
      invalid(
        path,
        JSON.stringify(endpoint),
        `unsupported scheme ${JSON.stringify(scheme)} for KMS provider, only unix is supported`,
      ),
    ];
  return [];
}
