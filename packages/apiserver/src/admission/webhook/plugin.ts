import type { AdmissionPlugin } from '../admission.js';
import type { AdmissionContext } from '../plugins.js';
import { resolveServiceAddress, type ServiceResolver } from '../../webhook/client.js';
import { VersionConverter } from './conversion.js';
import type { WebhookDeps } from './dispatcher.js';
import { WebhookMetrics } from './metrics.js';
import { MutatingWebhookPlugin } from './mutating.js';
import { configurationResource, WebhookSource, type WebhookKind } from './source.js';
import { ValidatingWebhookPlugin } from './validating.js';

const SERVICES = { group: '', version: 'v1', resource: 'services' };
const NAMESPACES = { group: '', version: 'v1', resource: 'namespaces' };

/** Kubernetes' service resolution for webhooks, over the server's own Services (cached first). */
function serviceResolver(ctx: AdmissionContext): ServiceResolver {
  return async (ref) =>
    resolveServiceAddress(await ctx.read(SERVICES, { namespace: ref.namespace, name: ref.name }), ref);
}

function webhookDeps(ctx: AdmissionContext, kind: WebhookKind): WebhookDeps {
  const resolveService = serviceResolver(ctx);
  const r = configurationResource(kind);
  const log = ctx.log.with({ plugin: kind === 'mutating' ? 'MutatingAdmissionWebhook' : 'ValidatingAdmissionWebhook' });
  return {
    source: new WebhookSource({
      store: () => {
        const type = ctx.catalog.lookup(r.group, r.version, r.resource);
        return type && ctx.storeFor(type);
      },
      resolveService,
      signal: ctx.signal,
      onError: (e) => log.warn('webhook configuration informer failed; relisting', { error: (e as Error).message }),
    }),
    converter: new VersionConverter({ read: ctx.read, resolveService }),
    metrics: WebhookMetrics.of(ctx.metrics.registry),
    log,
    catalog: ctx.catalog,
    authorizer: ctx.authorizer,
    namespaceLabels: async (name) => {
      const ns = await ctx.read(NAMESPACES, { namespace: '', name });
      return ns && (ns.metadata.labels ?? {});
    },
  };
}

/** The MutatingAdmissionWebhook plugin of this server. */
export function newMutatingWebhook(ctx: AdmissionContext): AdmissionPlugin {
  return new MutatingWebhookPlugin(webhookDeps(ctx, 'mutating'));
}

/** The ValidatingAdmissionWebhook plugin of this server. */
export function newValidatingWebhook(ctx: AdmissionContext): AdmissionPlugin {
  return new ValidatingWebhookPlugin(webhookDeps(ctx, 'validating'));
}
