import { group, groupVersion, internalError, type ApiObject, type ResourceType } from '@svc/api';
import { resourcePrefix } from '../registry/keys.js';
import { ConvertingStorage, type Converted } from '../storage/converting-storage.js';
import { isStorageError, type Storage } from '../storage/interface.js';
import { resolveServiceAddress, type ServiceReference } from '../webhook/client.js';
import { ConversionWebhook } from './conversion-webhook.js';
import type { Crd } from './crd.js';
import { applyDefaults, pruneUnknownFields, type JSONSchemaProps } from './schema/index.js';

export interface CustomResourceStorageOptions {
  storePrefix: string;
  /** One served version of a custom resource. */
  resource: ResourceType;
  /** How long a conversion webhook may take (default Kubernetes' 30 s). */
  webhookTimeoutMs?: number;
}

/**
 * The storage of one served version of a custom resource: every version shares one key
 * prefix (and so one watch cache); objects are written in the storage version and read in
 * the served one, with the schema's defaults applied on read as Kubernetes does.
 *
 * Only an object whose apiVersion differs from the one wanted is converted, as Kubernetes:
 * conversion `None` rewrites `apiVersion`; `Webhook` sends a ConversionReview (one per object
 * written or read, one per list page or watch batch) and prunes the answer by the target
 * version's schema. The CRD's conversion settings are read from storage once per store (a
 * store is made per catalog entry, and the CRD controller makes new entries when the CRD
 * changes); until then, conversions wait for that read.
 */
export function customResourceStorage(storage: Storage, o: CustomResourceStorageOptions): Storage {
  const r = o.resource;
  if (!r.custom) return storage;
  const prefix = resourcePrefix(o.storePrefix, r);
  const c = new CustomResourceConversion(storage, o);
  return new ConvertingStorage(storage, {
    servedPrefix: prefix,
    storedPrefix: prefix,
    toStored: (obj) => c.toStored(obj),
    fromStored: (obj) => c.fromStored(obj),
    fromStoredAll: (objs) => c.fromStoredAll(objs),
    convertsAtOnce: (obj, to) => c.convertsAtOnce(obj, to),
  });
}

/** What the CRD says about converting its objects. */
interface Settings {
  strategy: 'None' | 'Webhook';
  webhook?: ConversionWebhook;
  /** `<group>/<version>` of every version the CRD lists. */
  versions: ReadonlySet<string>;
  /** Each version's schema, for pruning a webhook's answer (absent: no pruning). */
  schemas: ReadonlyMap<string, JSONSchemaProps>;
}

class CustomResourceConversion {
  private readonly served: string;
  private readonly storageVersion: string;
  private readonly schema?: JSONSchemaProps;
  private readonly defaults: boolean;
  /** Objects a webhook answered with: nobody else holds them, so defaulting may change them in place. */
  private readonly fresh = new WeakSet<ApiObject>();
  private settings?: Settings;
  private loading?: Promise<Settings>;

  constructor(
    private readonly storage: Storage,
    private readonly o: CustomResourceStorageOptions,
  ) {
    const r = o.resource;
    this.served = groupVersion(r);
    this.storageVersion = groupVersion({ group: r.group, version: r.custom?.storageVersion ?? r.version });
    this.schema = r.custom?.openApiSchema as JSONSchemaProps | undefined;
    this.defaults = this.schema !== undefined && hasDefaults(this.schema);
    // Read the settings now, so most conversions need not wait for them; a failure is retried on use.
    this.load().catch(() => undefined);
  }

  convertsAtOnce(obj: ApiObject, to: 'stored' | 'served'): boolean {
    return (
      obj.apiVersion === (to === 'served' ? this.served : this.storageVersion) || this.settings?.strategy === 'None'
    );
  }

  toStored(obj: ApiObject): Converted {
    if (obj.apiVersion === this.storageVersion) return obj;
    if (this.settings?.strategy === 'None') return rewrite(this.settings, obj, this.storageVersion);
    return this.convert([obj], { to: this.storageVersion, asList: false }).then(([o]) => o as ApiObject);
  }

  fromStored(obj: ApiObject): Converted {
    if (obj.apiVersion === this.served) return this.withDefaults(obj);
    if (this.settings?.strategy === 'None') return this.withDefaults(rewrite(this.settings, obj, this.served));
    return this.convert([obj], { to: this.served, asList: false }).then(([o]) => this.withDefaults(o as ApiObject));
  }

  fromStoredAll(objs: readonly ApiObject[]): ApiObject[] | Promise<ApiObject[]> {
    const s = this.settings;
    if (s?.strategy === 'None' || objs.every((o) => o.apiVersion === this.served))
      return objs.map((o) => this.withDefaults(s && o.apiVersion !== this.served ? rewrite(s, o, this.served) : o));
    return this.convert(objs, { to: this.served, asList: true }).then((out) => out.map((o) => this.withDefaults(o)));
  }

  /** `objs` in version `to`, in order; those already in it are returned as they are. */
  private async convert(objs: readonly ApiObject[], o: { to: string; asList: boolean }): Promise<ApiObject[]> {
    const s = await this.load();
    if (s.strategy === 'None') return objs.map((obj) => rewrite(s, obj, o.to));
    const todo = objs.filter((obj) => obj.apiVersion !== o.to);
    if (todo.length === 0) return [...objs];
    for (const obj of todo) checkVersion(s, obj);
    const converted = await (s.webhook as ConversionWebhook).convert({
      objects: todo,
      desiredAPIVersion: o.to,
      asList: o.asList,
    });
    const schema = s.schemas.get(o.to);
    for (const obj of converted) {
      if (schema) pruneUnknownFields(obj, schema, true);
      this.fresh.add(obj);
    }
    let i = 0;
    return objs.map((obj) => (obj.apiVersion === o.to ? obj : (converted[i++] as ApiObject)));
  }

  /** The served object with the schema's defaults; never changes an object someone else holds. */
  private withDefaults(obj: ApiObject): ApiObject {
    if (!this.defaults || !this.schema) return obj;
    return applyDefaults(this.schema, this.fresh.has(obj) ? obj : structuredClone(obj));
  }

  /** The CRD's conversion settings, read once (again after a failed read). */
  private load(): Promise<Settings> {
    if (this.settings) return Promise.resolve(this.settings);
    this.loading ??= this.readSettings().then(
      (s) => (this.settings = s),
      (e: unknown) => {
        this.loading = undefined;
        throw e;
      },
    );
    return this.loading;
  }

  private async readSettings(): Promise<Settings> {
    const custom = this.o.resource.custom;
    const name = custom?.crdName ?? '';
    const key = resourcePrefix(this.o.storePrefix, {
      group: group('apiextensions'),
      plural: 'customresourcedefinitions',
    });
    let crd: Crd;
    try {
      crd = (await this.storage.get(key + name)) as Crd;
    } catch (e) {
      if (isStorageError(e, 'KeyNotFound')) throw internalError(`CustomResourceDefinition "${name}" not found`);
      throw e;
    }
    if (crd.metadata.uid !== custom?.crdUid)
      throw internalError(`CustomResourceDefinition "${name}" was replaced while its objects were being served`);
    const spec = crd.spec;
    const versions = new Set(spec.versions.map((v) => groupVersion({ group: spec.group, version: v.name })));
    const schemas = new Map<string, JSONSchemaProps>();
    if (!spec.preserveUnknownFields) {
      for (const v of spec.versions) {
        const schema = v.schema?.openAPIV3Schema as JSONSchemaProps | undefined;
        if (schema) schemas.set(groupVersion({ group: spec.group, version: v.name }), schema);
      }
    }
    const conversion = spec.conversion ?? { strategy: 'None' };
    switch (conversion.strategy) {
      case 'None':
        return { strategy: 'None', versions, schemas };
      case 'Webhook':
        return {
          strategy: 'Webhook',
          versions,
          schemas,
          webhook: new ConversionWebhook({
            clientConfig: conversion.webhook?.clientConfig ?? {},
            conversionReviewVersions: conversion.webhook?.conversionReviewVersions ?? [],
            resolveService: (ref) => this.resolveService(ref),
            timeoutMs: this.o.webhookTimeoutMs,
          }),
        };
      default:
        throw internalError(`unknown conversion strategy "${conversion.strategy}" for CRD ${name}`);
    }
  }

  /** The Service as a lister would see it (the watch cache), else as etcd has it (it may be new). */
  private async resolveService(ref: ServiceReference): Promise<{ host: string; port: number }> {
    const key = `${resourcePrefix(this.o.storePrefix, { group: '', plural: 'services' })}${ref.namespace}/${ref.name}`;
    let service: ApiObject | undefined;
    for (const opts of [{ allowStale: true }, {}]) {
      try {
        service = await this.storage.get(key, opts);
        break;
      } catch (e) {
        if (!isStorageError(e, 'KeyNotFound')) throw e;
      }
    }
    return resolveServiceAddress(service, ref);
  }
}

/** Conversion `None`: only `apiVersion` changes (the object's version must be one the CRD lists). */
function rewrite(s: Settings, obj: ApiObject, apiVersion: string): ApiObject {
  if (obj.apiVersion === apiVersion) return obj;
  checkVersion(s, obj);
  return { ...obj, apiVersion };
}

function checkVersion(s: Settings, obj: ApiObject): void {
  if (!s.versions.has(obj.apiVersion ?? ''))
    throw internalError(`request to convert CR from an invalid group/version: ${obj.apiVersion ?? ''}`);
}

/** Whether any node of the schema declares a default. */
export function hasDefaults(schema: unknown): boolean {
  if (schema === null || typeof schema !== 'object') return false;
  if (Array.isArray(schema)) return schema.some(hasDefaults);
  const o = schema as Record<string, unknown>;
  if ('default' in o) return true;
  return Object.entries(o).some(([k, v]) => k !== 'enum' && k !== 'example' && hasDefaults(v));
}
