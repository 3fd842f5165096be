import type { ResourceType } from '@svc/api';
import type { AdmissionAttributes, AdmissionPlugin } from '../admission.js';
import { callWebhook } from './call.js';
import { settle, waitReady, type WebhookDeps } from './dispatcher.js';
import { shouldCallHook, type Invocation, type Versioned } from './matching.js';
import { isExemptConfigurationResource } from './rules.js';

export const VALIDATING_WEBHOOK_PLUGIN = 'ValidatingAdmissionWebhook';

/**
 * ValidatingAdmissionWebhook (Kubernetes' validating dispatcher): every matching webhook is
 * found first (a matching problem ends the request), then all are called at once, each with
 * the objects in its matched version; the request fails with the first failure to arrive.
 */
export class ValidatingWebhookPlugin implements AdmissionPlugin {
  readonly name = VALIDATING_WEBHOOK_PLUGIN;

  constructor(private readonly deps: WebhookDeps) {}

  async validate(attrs: AdmissionAttributes): Promise<void> {
    if (isExemptConfigurationResource(attrs.resource)) return;
    await waitReady(this.deps, attrs);
    const hooks = this.deps.source.webhooks();
    if (hooks.length === 0) return;
    const versions = new Map<ResourceType, Promise<Versioned>>();
    const versioned = (r: ResourceType): Promise<Versioned> => {
      let v = versions.get(r);
      if (!v) {
        v =
          r === attrs.resource
            ? Promise.resolve({ resource: r, object: attrs.object, oldObject: attrs.oldObject })
            : this.convert(attrs, r);
        versions.set(r, v);
      }
      return v;
    };
    const relevant: Array<{ invocation: Invocation; index: number }> = [];
    for (const [index, hook] of hooks.entries()) {
      const invocation = await shouldCallHook({ hook, attrs, current: attrs, versioned }, this.deps);
      if (!invocation) continue;
      relevant.push({ invocation, index });
      await versioned(invocation.resource);
    }
    if (relevant.length === 0) return;
    let first: unknown;
    await Promise.all(
      relevant.map(async ({ invocation, index }) => {
        const started = performance.now();
        let error: unknown;
        try {
          const v = await versioned(invocation.resource);
          await callWebhook({ invocation, attrs, versioned: v, mutating: false, log: this.deps.log });
        } catch (e) {
          error = e;
        }
        try {
          settle(this.deps, { hook: invocation.hook, step: 'validating', attrs, started, index, round: 0, error });
        } catch (e) {
          first ??= e;
        }
      }),
    );
    if (first !== undefined) throw first;
  }

  private async convert(attrs: AdmissionAttributes, r: ResourceType): Promise<Versioned> {
    const c = { from: attrs.resource, to: r };
    const [object, oldObject] = await Promise.all([
      attrs.object && this.deps.converter.convert(attrs.object, c),
      attrs.oldObject && this.deps.converter.convert(attrs.oldObject, c),
    ]);
    return { resource: r, object, oldObject };
  }
}
