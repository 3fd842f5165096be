import { createServer, isIP, type Server, type Socket } from 'node:net';
import { STREAMING_PROTOCOLS } from '@svc/api/names';
import type { Invocation } from '../invocation.js';
import { Session } from '../session.js';
import { resourcePath, type Discovery } from '../discovery.js';
import { CliError } from '../errors.js';
import { openPortForwardTransport } from '../streaming/ws-tunnel.js';
import { attachablePod, type Pod } from '../streaming/pods.js';
import { SpdyClient } from '../streaming/spdy-client.js';
import type { ApiObjectJson } from '../objects.js';
import type { SvcctlIo } from '../io.js';

export interface PortForwardOptions {
  address?: string[];
  podRunningTimeout?: string;
}

/** kubectl 1.32's port-forward over WebSocket: SPDY/3.1 tunnelled in binary messages. */
const TUNNELED = `SPDY/3.1+${STREAMING_PROTOCOLS.portForward}`;

interface Service extends ApiObjectJson {
  spec?: { ports?: Array<{ name?: string; port: number; targetPort?: number | string }> };
}

interface ForwardedPort {
  local: number;
  remote: number;
}

function split(spec: string): { local: string; remote: string } {
  const parts = spec.split(':');
  if (parts.length === 2) return { local: parts[0] ?? '', remote: parts[1] ?? '' };
  return { local: spec, remote: spec };
}

/** Go's strconv.ParseUint(s, 10, 16) error text, or the number. */
function parseUint16(s: string): number | string {
  if (!/^\d+$/.test(s)) return `strconv.ParseUint: parsing ${JSON.stringify(s)}: invalid syntax`;
  const n = Number(s);
  if (n > 65535) return `strconv.ParseUint: parsing ${JSON.stringify(s)}: value out of range`;
  return n;
}

/** kubectl's parsePorts: `PORT`, `LOCAL:REMOTE`, `:REMOTE` (a random local port). */
export function parsePorts(specs: string[]): ForwardedPort[] {
  return specs.map((spec) => {
    const parts = spec.split(':');
    if (parts.length > 2) throw new CliError(`invalid port format '${spec}'`);
    const { remote } = split(spec);
    let { local } = split(spec);
    if (parts.length === 2 && local === '') local = '0';
    const l = parseUint16(local);
    if (typeof l === 'string') throw new CliError(`error parsing local port '${local}': ${l}`);
    const r = parseUint16(remote);
    if (typeof r === 'string') throw new CliError(`error parsing remote port '${remote}': ${r}`);
    if (r === 0) throw new CliError('remote port must be > 0');
    return { local: l, remote: r };
  });
}

function podPortByName(pod: Pod, name: string): number {
  for (const c of pod.spec?.containers ?? [])
    for (const p of c.ports ?? []) if (p.name === name) return p.containerPort;
  throw new CliError(`Pod '${pod.metadata?.name ?? ''}' does not have a named port '${name}'`);
}

/** kubectl's convertPodNamedPortToNumber: named remote ports of the pod's containers become numbers. */
function podPorts(pod: Pod, specs: string[]): string[] {
  return specs.map((spec) => {
    const { local, remote } = split(spec);
    const number = /^-?\d+$/.test(remote) ? remote : String(podPortByName(pod, remote));
    return local !== remote ? `${local}:${number}` : number;
  });
}

/** kubectl's translateServicePortToTargetPort: service ports become the pod's target ports. */
function servicePorts(o: { svc: Service; pod: Pod; specs: string[] }): string[] {
  const name = o.svc.metadata?.name ?? '';
  return o.specs.map((spec) => {
    const { remote } = split(spec);
    let { local } = split(spec);
    let port = Number(remote);
    if (!/^-?\d+$/.test(remote)) {
      const byName = o.svc.spec?.ports?.find((p) => p.name === remote);
      if (!byName) throw new CliError(`Service '${name}' does not have a named port '${remote}'`);
      port = byName.port;
      if (local === remote) local = String(port);
    }
    const sp = o.svc.spec?.ports?.find((p) => p.port === port);
    if (!sp) throw new CliError(`Service ${name} does not have a service port ${port}`);
    const target = sp.targetPort;
    const container =
      target === undefined || target === 0
        ? sp.port
        : typeof target === 'number' || /^\d+$/.test(target)
          ? Number(target)
          : podPortByName(o.pod, target);
    return local !== String(container) ? `${local}:${container}` : String(container);
  });
}

/** The addresses to listen on: `localhost` is 127.0.0.1 and ::1, as kubectl listens. */
function listenAddresses(addresses: string[]): Array<{ host: string; loopbackPair: boolean }> {
  const out: Array<{ host: string; loopbackPair: boolean }> = [];
  for (const a of addresses) {
    if (a === 'localhost') out.push({ host: '127.0.0.1', loopbackPair: true }, { host: '::1', loopbackPair: true });
    else if (isIP(a)) out.push({ host: a, loopbackPair: false });
    else throw new CliError(`${a} is not a valid IP`);
  }
  return out;
}

function listen(o: { host: string; port: number }): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen({ host: o.host, port: o.port, exclusive: true }, () => {
      server.off('error', reject);
      resolve(server);
    });
  });
}

/** One local connection: an error stream and a data stream with the same request id, joined to the socket. */
function forwardConnection(o: {
  spdy: SpdyClient;
  conn: Socket;
  port: ForwardedPort;
  requestId: number;
  io: SvcctlIo;
}): void {
  const { spdy, conn, port, io } = o;
  io.out(`Handling connection for ${port.local}\n`);
  const headers = { streamtype: 'error', port: String(port.remote), requestid: String(o.requestId) };
  const error = spdy.open(headers);
  error.end();
  let message = '';
  error.onData((b) => {
    message += b.toString('utf8');
  });
  const data = spdy.open({ ...headers, streamtype: 'data' });
  conn.on('data', (b: Buffer) => {
    if (!data.write(b)) {
      conn.pause();
      spdy.transport.once('drain', () => conn.resume());
    }
  });
  conn.on('end', () => data.end());
  conn.on('error', () => conn.destroy());
  conn.on('close', () => data.end());
  data.onData((b) => {
    if (!conn.destroyed) conn.write(b);
  });
  data.onEnd(() => conn.end());
  error.onEnd(() => {
    conn.end();
    if (message) {
      io.err(`error: an error occurred forwarding ${port.local} -> ${port.remote}: ${message}\n`);
      // kubectl gives up the whole connection when a forward fails.
      spdy.close();
    }
  });
}

async function resolveTarget(
  session: Session,
  o: { discovery: Discovery; arg: string; specs: string[] },
): Promise<{ pod: Pod; ports: ForwardedPort[] }> {
  const pod = await attachablePod(session, { discovery: o.discovery, arg: o.arg });
  const slash = o.arg.indexOf('/');
  const type = slash >= 0 ? o.arg.slice(0, slash) : 'pod';
  const r = o.discovery.resolve(type)[0];
  let specs: string[];
  if (r && r.resource === 'services' && r.group === '') {
    const svc = await session.call<Service>(
      'GET',
      resourcePath(r, { namespace: session.namespace, name: o.arg.slice(slash + 1) }),
    );
    specs = servicePorts({ svc, pod, specs: o.specs });
  } else specs = podPorts(pod, o.specs);
  return { pod, ports: parsePorts(specs) };
}

/**
 * `port-forward TYPE/NAME [LOCAL_PORT:]REMOTE_PORT...`: listens on the local addresses and
 * forwards each connection to the pod's port through the API server's pods/portforward
 * (one WebSocket for the whole run, one pair of SPDY streams per connection), until interrupted.
 */
export async function run(inv: Invocation<PortForwardOptions>): Promise<void> {
  const { io, opts, args } = inv;
  if (args.length < 2)
    throw new CliError(
      "TYPE/NAME and list of ports are required for port-forward\nSee 'svcctl port-forward -h' for help and examples",
    );
  const addresses = listenAddresses(opts.address?.length ? opts.address : ['localhost']);
  const session = Session.open(inv.globals, io);
  const servers: Server[] = [];
  try {
    const discovery = await session.discovery();
    const { pod, ports } = await resolveTarget(session, { discovery, arg: args[0] ?? '', specs: args.slice(1) });
    if (pod.status?.phase !== 'Running')
      throw new CliError(
        `unable to forward port because pod is not running. Current status=${pod.status?.phase ?? ''}`,
      );
    const podRes = discovery.builtin({ group: '', resource: 'pods' });
    const path = resourcePath(podRes, {
      namespace: pod.metadata?.namespace,
      name: pod.metadata?.name,
      subresource: 'portforward',
    });
    const transport = await openPortForwardTransport(session, {
      path,
      protocol: TUNNELED,
      spdyProtocol: STREAMING_PROTOCOLS.portForward,
      globals: inv.globals,
      signal: io.signal,
    });
    transport.stream.on('error', () => transport.stream.destroy());
    const spdy = new SpdyClient(transport.stream);
    let requestId = 0;
    for (const port of ports) {
      let local = port.local;
      const failures: string[] = [];
      for (const a of addresses) {
        try {
          const server = await listen({ host: a.host, port: local });
          local = (server.address() as { port: number }).port;
          const fp = { local, remote: port.remote };
          server.on('connection', (conn: Socket) =>
            forwardConnection({ spdy, conn, port: fp, requestId: requestId++, io }),
          );
          servers.push(server);
          const shown = a.host.includes(':') ? `[${a.host}]` : a.host;
          io.out(`Forwarding from ${shown}:${local} -> ${port.remote}\n`);
        } catch (e) {
          failures.push(
            `unable to create listener: Error listen tcp${a.host.includes(':') ? '6' : '4'} ${a.host.includes(':') ? `[${a.host}]` : a.host}:${local}: ${(e as Error).message}`,
          );
        }
      }
      if (failures.length === addresses.length) {
        io.err(
          `Unable to listen on port ${port.local}: Listeners failed to create with the following errors: [${failures.join(' ')}]\n`,
        );
      }
    }
    if (servers.length === 0)
      throw new CliError(
        `unable to listen on any of the requested ports: [${ports.map((p) => `{${p.local} ${p.remote}}`).join(' ')}]`,
      );
    const lost = await new Promise<boolean>((resolve) => {
      spdy.onClose(() => resolve(true));
      if (io.signal?.aborted) resolve(false);
      io.signal?.addEventListener('abort', () => resolve(false), { once: true });
    });
    spdy.close();
    transport.close();
    if (lost) throw new CliError('lost connection to pod');
  } finally {
    for (const s of servers) s.close();
    session.close();
  }
}
