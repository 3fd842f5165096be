import { group, groupSpellings, statusError, type Catalog } from '@svc/api';
import { healthHandler } from '@svc/component-base';
import type { AuthnDocument } from '../authn/build.js';
import {
  aggregatedDiscovery,
  apiGroupDoc,
  apiGroupList,
  apiResourceList,
  apiVersions,
} from '../endpoints/discovery.js';
import { parseAccept } from '../endpoints/media-types.js';
import { openApiV2Answer, openApiV3Document, openApiV3Root } from '../endpoints/openapi.js';
import type { ApiServerMetrics } from '../metrics/metrics.js';
import type { ApiRequest, Handler } from './filters/chain.js';
import type { HealthChecks } from './health.js';
import type { ProfilingHandler } from './profiling.js';
import type { ServingAddress } from './serve.js';
import { versionInfo } from './version.js';

export interface NonResourceDeps {
  catalog: Catalog;
  metrics: ApiServerMetrics;
  health: HealthChecks;
  /** Issuer discovery documents of service-account tokens. */
  documents: readonly AuthnDocument[];
  address: ServingAddress;
  /** `--profiling`: `/debug/pprof/…` (authorized like any non-resource path: RBAC's `/debug/*`). */
  profiling?: ProfilingHandler;
}

type Route = (r: ApiRequest, rest: string[]) => Promise<void> | void;

/**
 * Everything that is not a resource request, by path: health, version, metrics, issuer
 * discovery, OpenAPI and API discovery. GET (and HEAD) only; anything else is a 404 Status.
 */
export function nonResourceHandler(d: NonResourceDeps): Handler {
  const exact = new Map<string, Route>();
  const prefixed = new Map<string, Route>();
  for (const endpoint of ['livez', 'readyz', 'healthz'] as const) {
    const h = healthHandler(d.health[endpoint]);
    exact.set(`/${endpoint}`, (r) => h(r.req, r.res));
    prefixed.set(`/${endpoint}`, (r, rest) => h(r.req, r.res, rest.join('/')));
  }
  exact.set('/version', (r) => void r.res.json(versionInfo()));
  exact.set('/metrics', async (r) => {
    r.res.type(d.metrics.registry.contentType).send(await d.metrics.registry.metrics());
  });
  for (const doc of d.documents) exact.set(doc.path, (r) => void r.res.type(doc.contentType).send(doc.body()));
  exact.set('/openapi/v2', (r) => {
    // As kube-openapi: both forms share one ETag and vary by Accept; express answers a
    // matching If-None-Match / If-Modified-Since with 304.
    r.res.setHeader('Vary', 'Accept');
    const answer = openApiV2Answer(d.catalog, r.req.headers.accept);
    r.res.setHeader('Content-Type', answer.contentType);
    r.res.setHeader('ETag', `"${answer.etag}"`);
    r.res.setHeader('Last-Modified', answer.lastModified.toUTCString());
    r.res.send(answer.body);
  });
  exact.set('/openapi/v3', (r) => void r.res.json(openApiV3Root(d.catalog)));
  prefixed.set('/openapi/v3', (r, rest) => {
    const [prefix, a = '', b = ''] = rest;
    const doc =
      prefix === 'api' && rest.length === 2
        ? openApiV3Document(d.catalog, '', a)
        : prefix === 'apis' && rest.length === 3
          ? openApiV3Document(d.catalog, a, b)
          : undefined;
    if (!doc) throw notFoundPath();
    r.res.setHeader('Cache-Control', 'public, immutable');
    r.res.json(doc);
  });
  const profiling = d.profiling;
  if (profiling) {
    const debug: Route = async (r) => {
      if (!(await profiling(r.req, r.res, r.info.path))) throw notFoundPath();
    };
    exact.set('/debug/pprof', debug);
    prefixed.set('/debug/pprof', debug);
  }
  exact.set('/api', (r) => discovery(d, r, true));
  exact.set('/apis', (r) => discovery(d, r, false));
  exact.set('/api/v1', (r) => void r.res.json(found(apiResourceList(d.catalog, '', 'v1'))));
  prefixed.set('/apis', (r, [g = '', v, ...more]) => {
    if (more.length > 0) throw notFoundPath();
    r.res.json(found(v === undefined ? apiGroupDoc(d.catalog, g) : apiResourceList(d.catalog, g, v)));
  });

  return async (r) => {
    if (r.req.method !== 'GET' && r.req.method !== 'HEAD') throw notFoundPath();
    const path = r.info.path.length > 1 ? r.info.path.replace(/\/$/, '') : r.info.path;
    const route = exact.get(path);
    if (route) return route(r, []);
    const segments = path.split('/').filter((s) => s !== '');
    for (let n = segments.length - 1; n > 0; n--) {
      const longest = prefixed.get(`/${segments.slice(0, n).join('/')}`);
      if (longest) return longest(r, segments.slice(n).map(decodeSegment));
    }
    throw notFoundPath();
  };
}

/** `/api` and `/apis`: aggregated discovery (v2) when the client asks for it, else the legacy lists. */
function discovery(d: NonResourceDeps, r: ApiRequest, core: boolean): void {
  const wanted = parseAccept(r.req.headers.accept)[0];
  const g = wanted?.params.g ?? '';
  if (wanted?.params.as === 'APIGroupDiscoveryList' && wanted.params.v === 'v2' && isDiscoveryGroup(g)) {
    r.res.setHeader('Content-Type', `application/json;g=${g};v=v2;as=APIGroupDiscoveryList`);
    r.res.send(JSON.stringify(aggregatedDiscovery(d.catalog, core, g)));
    return;
  }
  r.res.json(core ? apiVersions(d.address.serverAddress(r.req.socket.localAddress)) : apiGroupList(d.catalog));
}

function isDiscoveryGroup(g: string): boolean {
  return groupSpellings(group('apidiscovery')).includes(g);
}

function found<T>(doc: T | undefined): T {
  if (doc === undefined) throw notFoundPath();
  return doc;
}

function decodeSegment(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

export function notFoundPath(): Error {
  return statusError('NotFound', 'the server could not find the requested resource');
}
