import type { IncomingMessage } from 'node:http';
import { buffer as readAll } from 'node:stream/consumers';
import { badRequest, internalError, StatusError, type Status } from '@svc/api';
import type { GenericStore } from '../../registry/store.js';
import { containerLogsQuery, logContainer, parsePodLogOptions } from '../../registry/pod-log.js';
import { svcletEndpoint, type SvcletClient } from '../../server/svclet-client.js';
import type { ServedRequest } from '../resource-router.js';

export interface PodLogDeps {
  pods: () => GenericStore;
  nodes: () => GenericStore;
  svclet: SvcletClient;
}

/** Kubernetes' answer to an error that carries no Status: 500 with no reason and the error's text. */
function unknownError(message: string): StatusError {
  return new StatusError({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, code: 500 });
}

/** The most of an agent's error body that is read (Kubernetes' maxReadLength). */
const MAX_ERROR_BODY = 50_000;

/** An agent's non-2xx answer as Kubernetes' GenericHttpResponseChecker turns it into a Status. */
async function agentError(res: IncomingMessage, pod: string): Promise<StatusError> {
  const code = res.statusCode ?? 500;
  const body = (await readAll(res)).subarray(0, MAX_ERROR_BODY).toString('utf8');
  if (code === 400) return badRequest(body);
  if (code === 500) return internalError(body);
  const known: Partial<Record<number, [string, string]>> = {
    401: ['Unauthorized', 'the server has asked for the client to provide credentials'],
    403: ['Forbidden', body],
    404: ['NotFound', 'the server could not find the requested resource'],
    503: ['ServiceUnavailable', 'the server is currently unable to handle the request'],
  };
  const [reason, message] =
    known[code] ??
    (code >= 500
      ? ['InternalError', `an error on the server (${JSON.stringify(body)}) has prevented the request from succeeding`]
      : [undefined, `the server responded with the status code ${code} but did not return more information`]);
  // The verb of Kubernetes' message is empty here, hence `( pods/log <name>)`.
  const status: Status = {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    code,
    message: `${message} ( pods/log ${pod})`,
    details: { kind: 'pods/log', name: pod },
  };
  if (reason) status.reason = reason;
  return new StatusError(status);
}

/**
 * GET `pods/<name>/log` (Kubernetes' LogREST): finds the container and the pod's node, then
 * streams the node agent's `/containerLogs/<ns>/<pod>/<container>` back as text/plain, each
 * chunk written as it arrives. A pod without a node answers 204 with no body, as Kubernetes.
 * The upstream request ends when the client goes away, and the answer ends when the agent's
 * does (with `follow`, only then).
 */
export async function servePodLog(deps: PodLogDeps, r: Pick<ServedRequest, 'res' | 'info'>): Promise<void> {
  const { res, info } = r;
  const opts = parsePodLogOptions(info.query, info.name);
  const pod = await deps.pods().get(info.namespace, info.name);
  const container = logContainer(pod, opts.container);
  const nodeName = (pod.spec as { nodeName?: string } | undefined)?.nodeName;
  if (!nodeName) {
    res.status(204).end();
    return;
  }
  const node = await deps.nodes().get('', nodeName);
  let endpoint: { host: string; port: number };
  try {
    endpoint = svcletEndpoint(node, deps.svclet.preferredAddressTypes);
  } catch (e) {
    throw unknownError((e as Error).message);
  }
  const host = endpoint.host.includes(':') ? `[${endpoint.host}]` : endpoint.host;
  const url = new URL(`https://${host}:${endpoint.port}`);
  url.pathname = `/containerLogs/${encodeURIComponent(info.namespace)}/${encodeURIComponent(info.name)}/${encodeURIComponent(container)}`;
  url.search = containerLogsQuery(opts).toString();

  const gone = new AbortController();
  res.once('close', () => gone.abort());
  let upstream: IncomingMessage;
  try {
    upstream = await deps.svclet.get(url, gone.signal);
  } catch (e) {
    if (gone.signal.aborted) return;
    throw unknownError((e as Error).message);
  }
  const code = upstream.statusCode ?? 500;
  if (code < 200 || code > 206) throw await agentError(upstream, info.name);
  res.status(200);
  res.setHeader('Content-Type', 'text/plain');
  res.flushHeaders();
  upstream.pipe(res, { end: false });
  await new Promise<void>((resolve) => {
    upstream.once('end', resolve);
    upstream.once('error', resolve);
    upstream.once('close', resolve);
  });
  res.end();
}
