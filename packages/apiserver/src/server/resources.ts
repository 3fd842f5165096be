import type { ResourceType } from '@svc/api';
import type { Authentication } from '../authn/build.js';
import { accessReviewHandlers, type Authorization } from '../authz/rbac/setup.js';
import { servePodLog } from '../endpoints/handlers/pod-log.js';
import { servePodStream } from '../endpoints/handlers/pod-stream.js';
import { serveProxy } from '../endpoints/handlers/proxy.js';
import type { OwnEndpoint, ResourceRouterDeps } from '../endpoints/resource-router.js';
import { endpointKey } from '../registry/create-only.js';
import { podBindingHandlers } from '../registry/pod-binding.js';
import { podEvictionHandler } from '../registry/pod-eviction.js';
import { componentStatusHandler, controlPlaneProbes } from '../registry/component-status.js';
import { storeClients } from './component-status-stores.js';
import type { Startup } from './startup.js';
import type { Stores } from './stores.js';
import type { SvcletClient } from './svclet-client.js';

/** The resource router: stored types' verbs, and the endpoints of their own (reviews, token, binding, log). */
export function resourceRouter(
  s: Startup,
  d: { stores: Stores; authentication: Authentication; authorization: Authorization; svclet: SvcletClient },
): ResourceRouterDeps {
  const { opts, catalog } = s;
  const lookup = (g: string, v: string, p: string): ResourceType | undefined => catalog.lookup(g, v, p);
  const endpoints = new Map<string, OwnEndpoint>();
  const creates = [
    ...d.authentication.createOnly,
    ...accessReviewHandlers(lookup, d.authorization.authorizer, d.authorization.rules),
  ];
  const pods = lookup('', 'v1', 'pods');
  const nodes = lookup('', 'v1', 'nodes');
  if (pods) {
    creates.push(
      ...podBindingHandlers({ pod: pods, binding: lookup('', 'v1', 'bindings'), pods: () => d.stores.storeFor(pods) }),
    );
    const budgets = lookup('policy', 'v1', 'poddisruptionbudgets');
    if (budgets)
      creates.push(
        podEvictionHandler({
          pod: pods,
          pods: () => d.stores.storeFor(pods),
          budgets: () => d.stores.storeFor(budgets),
        }),
      );
    if (nodes) {
      const logs = { pods: () => d.stores.storeFor(pods), nodes: () => d.stores.storeFor(nodes), svclet: d.svclet };
      endpoints.set(endpointKey(pods, 'log'), { connect: (r) => servePodLog(logs, r) });
      for (const kind of ['exec', 'attach', 'portforward'] as const)
        endpoints.set(endpointKey(pods, kind), {
          connect: (r) => servePodStream({ ...logs, kind }, r),
          connectPost: true,
        });
      const services = lookup('', 'v1', 'services');
      const endpointsType = lookup('', 'v1', 'endpoints');
      if (services && endpointsType) {
        const proxy = {
          ...logs,
          services: () => d.stores.storeFor(services),
          endpoints: () => d.stores.storeFor(endpointsType),
        };
        for (const [type, kind] of [
          [pods, 'pods'],
          [services, 'services'],
          [nodes, 'nodes'],
        ] as const)
          endpoints.set(endpointKey(type, 'proxy'), {
            connect: (r) => serveProxy({ ...proxy, kind }, r),
            anyMethod: true,
          });
      }
    }
  }
  for (const [key, create] of creates) endpoints.set(key, { create });
  const componentStatuses = lookup('', 'v1', 'componentstatuses');
  if (componentStatuses) {
    const probes = controlPlaneProbes({ stores: storeClients(opts) });
    endpoints.set(endpointKey(componentStatuses), {
      read: componentStatusHandler({ type: componentStatuses, probes: () => probes }),
    });
  }
  return {
    catalog,
    storeFor: (r) => d.stores.storeFor(r),
    watch: {
      minRequestTimeoutSeconds: opts.minRequestTimeoutSeconds,
      watchListEnabled: opts.featureGates.enabled('WatchList'),
      maxBytesPerSec: opts.serving.maxConnectionBytesPerSec,
      stopping: s.stopping.signal,
    },
    responseCompression: opts.featureGates.enabled('APIResponseCompression'),
    endpoints,
    onDeprecated: (r, subresource) =>
      s.metrics.requestedDeprecatedApis.set(
        { group: r.group, version: r.version, resource: r.plural, subresource, removed_release: '' },
        1,
      ),
  };
}
