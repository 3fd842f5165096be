import { badRequest, StatusError } from '@svc/api';
import { isUpgrade } from '@svc/component-base';
import type { GenericStore } from '../../registry/store.js';
import { logContainer } from '../../registry/pod-log.js';
import { svcletEndpoint, type SvcletClient } from '../../server/svclet-client.js';
import type { ServedRequest } from '../resource-router.js';
import { optionalBool } from './list-params.js';

export interface PodStreamDeps {
  pods: () => GenericStore;
  nodes: () => GenericStore;
  svclet: SvcletClient;
}

/** The streaming subresources of a pod. */
export type PodStreamKind = 'exec' | 'attach' | 'portforward';

/** Go's strconv.ParseBool, as Kubernetes decodes the options' booleans (absent: false); anything else is a 400. */
function boolParam(q: URLSearchParams, name: string): boolean {
  return optionalBool(q, name) ?? false;
}

/** Kubernetes' answer to an error that carries no Status: 500 with the error's text. */
function unknownError(message: string): StatusError {
  return new StatusError({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, code: 500 });
}

/**
 * The node agent's path and query for a request (Kubernetes' ExecLocation, AttachLocation,
 * PortForwardLocation): `/exec|attach/<ns>/<pod>/<container>` with `command`, `input`,
 * `output`, `error`, `tty` as `1`; `/portForward/<ns>/<pod>` with one `port` per port asked.
 */
function agentPath(o: { kind: PodStreamKind; info: ServedRequest['info']; container: string }): string {
  const q = o.info.query;
  const out = new URLSearchParams();
  const ns = encodeURIComponent(o.info.namespace);
  const pod = encodeURIComponent(o.info.name);
  if (o.kind === 'portforward') {
    for (const p of q.getAll('ports').flatMap((x) => x.split(','))) if (p.trim()) out.append('port', p.trim());
    const query = out.toString();
    return `/portForward/${ns}/${pod}${query ? `?${query}` : ''}`;
  }
  const flags: Array<[string, string]> = [
    ['stdin', 'input'],
    ['stdout', 'output'],
    ['stderr', 'error'],
    ['tty', 'tty'],
  ];
  if (o.kind === 'exec') for (const c of q.getAll('command')) out.append('command', c);
  for (const [param, agent] of flags) if (boolParam(q, param)) out.append(agent, '1');
  return `/${o.kind}/${ns}/${pod}/${encodeURIComponent(o.container)}?${out.toString()}`;
}

/**
 * `pods/<name>/exec`, `attach` and `portforward` (GET for WebSocket, POST for SPDY; Kubernetes'
 * connect subresources): checks the options, the pod, its container and its node, answering a
 * Status before any upgrade, then passes the upgrade on to the node agent over TLS with the
 * `--svclet-*` client certificate and joins the connections. The protocol (WebSocket
 * `v5.channel.k8s.io`/`v4`, port-forward tunnelled in WebSocket, or SPDY/3.1) is negotiated
 * end to end with the runtime's streaming server; nothing here buffers a stream. An agent's
 * answer other than 101 goes back to the client as it came, as Kubernetes' upgrade-aware proxy
 * does.
 */
export async function servePodStream(
  deps: PodStreamDeps & { kind: PodStreamKind },
  r: Pick<ServedRequest, 'req' | 'res' | 'info'>,
): Promise<void> {
  const { req, res, info } = r;
  const q = info.query;
  if (deps.kind === 'exec' && q.getAll('command').length === 0) throw badRequest('you must specify at least 1 command');
  if (deps.kind !== 'portforward' && !['stdin', 'stdout', 'stderr'].some((p) => boolParam(q, p)))
    throw badRequest('you must specify at least 1 of stdin, stdout, stderr');
  const pod = await deps.pods().get(info.namespace, info.name);
  const container = deps.kind === 'portforward' ? '' : logContainer(pod, q.get('container') ?? '');
  const nodeName = (pod.spec as { nodeName?: string } | undefined)?.nodeName;
  if (!nodeName) throw badRequest(`pod ${info.name} does not have a host assigned`);
  const node = await deps.nodes().get('', nodeName);
  let endpoint: { host: string; port: number };
  try {
    endpoint = svcletEndpoint(node, deps.svclet.preferredAddressTypes);
  } catch (e) {
    throw unknownError((e as Error).message);
  }
  if (!isUpgrade(req)) throw badRequest('Upgrade request required');
  const host = endpoint.host.includes(':') ? `[${endpoint.host}]` : endpoint.host;
  const url = new URL(`https://${host}:${endpoint.port}${agentPath({ kind: deps.kind, info, container })}`);
  const gone = new AbortController();
  res.once('close', () => gone.abort());
  let out: Awaited<ReturnType<SvcletClient['upgrade']>>;
  try {
    out = await deps.svclet.upgrade({ req, res, url, signal: gone.signal });
  } catch (e) {
    throw unknownError(`error dialing backend: ${(e as Error).message}`);
  }
  if (out.upgraded) {
    res.statusCode = 101;
    return;
  }
  const answer = out.response;
  res.status(answer.statusCode ?? 500);
  const type = answer.headers['content-type'];
  if (type) res.setHeader('Content-Type', type);
  answer.pipe(res);
  await new Promise<void>((resolve) => {
    answer.once('end', resolve);
    answer.once('error', resolve);
    answer.once('close', resolve);
  });
}
