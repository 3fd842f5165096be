import { group, groupVersion, internalError, type ApiObject, type ResourceType } from '@svc/api';
import { ConversionWebhook } from '../../apiextensions/conversion-webhook.js';
import type { Crd } from '../../apiextensions/crd.js';
import { applyDefaults, pruneUnknownFields, type JSONSchemaProps } from '../../apiextensions/schema/index.js';
import type { ServiceResolver } from '../../webhook/client.js';
import { clone } from '../../registry/object-utils.js';

export interface ConverterOptions {
  /** A served object, cached first (the CRD of a custom resource). */
  read(
    r: { group: string; version: string; resource: string },
    ref: { namespace: string; name: string },
  ): Promise<ApiObject | undefined>;
  resolveService: ServiceResolver;
}

/**
 * Converts an object between equivalent resources (admission/webhook/rules.ts) for a webhook
 * matched through one (`matchPolicy: Equivalent`): a type stored as another through its
 * conversion functions, a custom resource through its CRD's conversion (`None` changes only
 * `apiVersion`; `Webhook` calls the conversion webhook, then prunes and defaults by the target
 * version's schema). Never changes `obj`; a failure is a 500.
 */
export class VersionConverter {
  private readonly webhooks = new Map<string, ConversionWebhook>();

  constructor(private readonly o: ConverterOptions) {}

  async convert(obj: ApiObject, c: { from: ResourceType; to: ResourceType }): Promise<ApiObject> {
    const { from, to } = c;
    if (from === to) return obj;
    if (from.storedAs || to.storedAs) {
      const stored = from.storedAs ? from.storedAs.toStored(clone(obj)) : clone(obj);
      return to.storedAs ? to.storedAs.fromStored(stored) : stored;
    }
    if (from.custom && to.custom && from.custom.crdUid === to.custom.crdUid) return this.convertCustom(obj, to);
    throw internalError(`unable to convert to ${groupVersion(to)}, Kind=${to.kind}: no conversion`);
  }

  private async convertCustom(obj: ApiObject, to: ResourceType): Promise<ApiObject> {
    const info = to.custom;
    const desired = groupVersion(to);
    const crd = (await this.o.read(
      { group: group('apiextensions'), version: 'v1', resource: 'customresourcedefinitions' },
      { namespace: '', name: info?.crdName ?? '' },
    )) as Crd | undefined;
    if (!crd || crd.metadata.uid !== info?.crdUid)
      throw internalError(`CustomResourceDefinition "${info?.crdName ?? ''}" not found`);
    const conversion = crd.spec.conversion ?? { strategy: 'None' };
    let out: ApiObject;
    if (conversion.strategy !== 'Webhook') out = { ...clone(obj), apiVersion: desired };
    else {
      const key = `${crd.metadata.uid ?? ''}/${crd.metadata.resourceVersion ?? ''}`;
      let webhook = this.webhooks.get(key);
      if (!webhook) {
        webhook = new ConversionWebhook({
          clientConfig: conversion.webhook?.clientConfig ?? {},
          conversionReviewVersions: conversion.webhook?.conversionReviewVersions ?? [],
          resolveService: this.o.resolveService,
        });
        this.webhooks.clear();
        this.webhooks.set(key, webhook);
      }
      const [converted] = await webhook.convert({ objects: [obj], desiredAPIVersion: desired, asList: false });
      if (!converted) throw internalError(`conversion webhook returned no object`);
      out = converted;
      const schema = info?.openApiSchema as JSONSchemaProps | undefined;
      if (schema && !crd.spec.preserveUnknownFields) pruneUnknownFields(out, schema, true);
    }
    const schema = info?.openApiSchema as JSONSchemaProps | undefined;
    return schema ? applyDefaults(schema, out) : out;
  }
}
