import { isGoTrue } from '@svc/machinery';
/** What a request is about, parsed from method, path and query (Kubernetes' RequestInfo). */
export interface RequestInfo {
  isResourceRequest: boolean;
  path: string;
  /** Lowercase API verb (get, list, watch, create, update, patch, delete, deletecollection) or the lowercase HTTP method for non-resource requests. */
  verb: string;
  apiPrefix: string;
  apiGroup: string;
  apiVersion: string;
  namespace: string;
  resource: string;
  subresource: string;
  name: string;
  /** Extra path segments past the subresource (`/api/v1/namespaces/x/pods/y/proxy/a/b`). */
  parts: string[];
  /** The query parameters, parsed once for the whole request. */
  query: URLSearchParams;
  /**
   * Watches and streams (Kubernetes' long-running check: the watch verb, and the attach, exec,
   * log, portforward and proxy subresources): no request timeout, no in-flight seat.
   */
  longRunning: boolean;
}

const LONG_RUNNING_SUBRESOURCES = new Set(['attach', 'exec', 'log', 'portforward', 'proxy']);

const NAMESPACE_SUBRESOURCES = new Set(['status', 'finalize']);

/** `watch` read as Go's strconv.ParseBool (`True` from the Python client too); a bad value is the list handler's 400. */
function isWatch(query: URLSearchParams): boolean {
  return isGoTrue(query.get('watch'));
}

export function parseRequestInfo(method: string, rawPath: string, query: URLSearchParams): RequestInfo {
  const path = rawPath.split('?')[0] ?? '';
  const info: RequestInfo = {
    isResourceRequest: false,
    path,
    verb: method.toLowerCase(),
    apiPrefix: '',
    apiGroup: '',
    apiVersion: '',
    namespace: '',
    resource: '',
    subresource: '',
    name: '',
    parts: [],
    query,
    longRunning: false,
  };
  let parts = path
    .split('/')
    .filter((p) => p !== '')
    .map((p) => {
      try {
        return decodeURIComponent(p);
      } catch {
        return p;
      }
    });
  const prefix = parts[0];
  if (prefix !== 'api' && prefix !== 'apis') return info;
  info.apiPrefix = prefix;
  parts = parts.slice(1);
  if (prefix === 'apis') {
    if (parts.length < 3) return info; // discovery: /apis, /apis/g, /apis/g/v
    info.apiGroup = parts[0] ?? '';
    parts = parts.slice(1);
  } else if (parts.length < 2) {
    return info; // /api, /api/v1
  }
  info.apiVersion = parts[0] ?? '';
  parts = parts.slice(1);
  info.isResourceRequest = true;

  if (parts[0] === 'namespaces' && parts.length > 1) {
    info.namespace = parts[1] ?? '';
    if (parts.length > 2 && !NAMESPACE_SUBRESOURCES.has(parts[2] ?? '')) parts = parts.slice(2);
  }
  info.parts = parts;
  info.resource = parts[0] ?? '';
  info.name = parts[1] ?? '';
  info.subresource = parts[2] ?? '';

  const single = info.name !== '';
  switch (method.toUpperCase()) {
    case 'POST':
      info.verb = 'create';
      break;
    case 'GET':
    case 'HEAD':
      info.verb = isWatch(query) ? 'watch' : single ? 'get' : 'list';
      break;
    case 'PUT':
      info.verb = 'update';
      break;
    case 'PATCH':
      info.verb = 'patch';
      break;
    case 'DELETE':
      info.verb = single ? 'delete' : 'deletecollection';
      break;
    default:
      info.verb = method.toLowerCase();
  }
  info.longRunning = info.verb === 'watch' || LONG_RUNNING_SUBRESOURCES.has(info.subresource);
  return info;
}
