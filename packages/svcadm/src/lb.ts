import { connect, createServer, type Server, type Socket } from 'node:net';
import { request as httpsRequest } from 'node:https';
import { readFileSync } from 'node:fs';
import { listenBacklog } from '@svc/component-base';

/**
 * svc-lb: a small TCP load balancer in front of several API servers (the stable address of an
 * HA control plane, as a cloud or haproxy load balancer is for kubeadm). It does not
 * terminate TLS: every connection is piped to one backend, so clients verify the API
 * servers' own serving certificate (which must cover the LB's address).
 *
 * - Round-robin over the healthy backends, one choice per connection.
 * - Health: every `healthIntervalMs` an HTTPS GET of `healthPath` (/readyz) on each backend;
 *   200 marks it healthy, anything else (or no answer within the timeout) unhealthy.
 * - A connect failure (or a reset before the backend's first byte) marks the backend unhealthy
 *   at once and the connection is replayed on the next backend, so a dead API server costs a
 *   client nothing beyond the connections it already had open to it.
 * - When no backend is healthy, every backend is tried (health may lag behind a restart).
 */
export interface LoadBalancerOptions {
  /** `host:port` to listen on. */
  listen: string;
  /** `host:port` of each backend. */
  backends: string[];
  /** CA (PEM) that signed the backends' serving certificates; absent: not verified. */
  healthCaPem?: string;
  healthPath?: string;
  healthIntervalMs?: number;
  healthTimeoutMs?: number;
  connectTimeoutMs?: number;
  log?: (line: string) => void;
}

interface Backend {
  host: string;
  port: number;
  addr: string;
  healthy: boolean;
}

export interface LoadBalancer {
  readonly port: number;
  /** Healthy state of each backend, in the order given. */
  health(): Array<{ backend: string; healthy: boolean }>;
  close(): Promise<void>;
}

function splitHostPort(s: string): { host: string; port: number } {
  const i = s.lastIndexOf(':');
  const port = Number(s.slice(i + 1));
  if (i < 0 || !Number.isInteger(port) || port < 0 || port > 65535)
    throw new Error(`invalid address ${JSON.stringify(s)} (want host:port)`);
  return { host: s.slice(0, i).replace(/^\[|\]$/g, '') || '127.0.0.1', port };
}

export async function startLoadBalancer(o: LoadBalancerOptions): Promise<LoadBalancer> {
  if (o.backends.length === 0) throw new Error('at least one backend is required');
  const log = o.log ?? (() => undefined);
  const backends: Backend[] = o.backends.map((b) => ({ ...splitHostPort(b), addr: b, healthy: true }));
  const healthPath = o.healthPath ?? '/readyz';
  const healthTimeoutMs = o.healthTimeoutMs ?? 2000;
  const connectTimeoutMs = o.connectTimeoutMs ?? 3000;
  const sockets = new Set<Socket>();
  let next = 0;
  let closed = false;

  const setHealth = (b: Backend, healthy: boolean, why: string): void => {
    if (b.healthy !== healthy) log(`backend ${b.addr} ${healthy ? 'healthy' : `unhealthy (${why})`}`);
    b.healthy = healthy;
  };

  const probe = (b: Backend): Promise<void> =>
    new Promise((resolve) => {
      const req = httpsRequest(
        {
          host: b.host,
          port: b.port,
          path: healthPath,
          method: 'GET',
          agent: false,
          timeout: healthTimeoutMs,
          ...(o.healthCaPem ? { ca: o.healthCaPem, servername: undefined } : { rejectUnauthorized: false }),
        },
        (res) => {
          res.resume();
          setHealth(b, res.statusCode === 200, `${healthPath} answered ${res.statusCode ?? '?'}`);
          resolve();
        },
      );
      req.on('timeout', () => req.destroy(new Error('timeout')));
      req.on('error', (e) => {
        setHealth(b, false, e.message);
        resolve();
      });
      req.end();
    });
  const probeAll = async (): Promise<void> => {
    await Promise.all(backends.map(probe));
  };
  await probeAll();
  const timer = setInterval(() => {
    void probeAll();
  }, o.healthIntervalMs ?? 1000);
  timer.unref();

  /** Backends to try for one connection: healthy ones round-robin first, then the rest. */
  const order = (): Backend[] => {
    const start = next++ % backends.length;
    const rotated = [...backends.slice(start), ...backends.slice(0, start)];
    return [...rotated.filter((b) => b.healthy), ...rotated.filter((b) => !b.healthy)];
  };

  /**
   * One client connection. Until the chosen backend sends its first byte, the client's bytes
   * are kept and the connection is replayed on the next backend if this one fails (refused,
   * timed out, or reset before answering, as a server killed a moment ago does): nothing was
   * answered yet, so the client cannot tell. After the first byte, the two sockets are piped.
   */
  const handle = (client: Socket): void => {
    sockets.add(client);
    const sent: Buffer[] = [];
    let upstream: Socket | undefined;
    let piped = false;
    client.on('error', () => undefined);
    client.on('data', (d: Buffer) => {
      if (piped) return;
      sent.push(d);
      upstream?.write(d);
    });
    client.on('end', () => {
      if (piped) return;
      upstream?.end();
    });
    client.on('close', () => {
      sockets.delete(client);
      upstream?.destroy();
    });
    const candidates = order();
    const attempt = (i: number): void => {
      const b = candidates[i];
      if (!b || client.destroyed) {
        client.destroy();
        return;
      }
      const up = connect({ host: b.host, port: b.port });
      upstream = up;
      sockets.add(up);
      up.setTimeout(connectTimeoutMs);
      let answered = false;
      let failed = false;
      const fail = (why: string): void => {
        if (failed || answered) return;
        failed = true;
        up.destroy();
        sockets.delete(up);
        if (client.destroyed) return; // the client left first: not the backend's fault
        setHealth(b, false, why);
        attempt(i + 1);
      };
      up.on('timeout', () => fail('connect timeout'));
      up.on('error', (e) => {
        if (answered) client.destroy();
        else fail(e.message);
      });
      up.on('close', () => {
        sockets.delete(up);
        if (!answered) fail('closed before answering');
        else if (!client.writableEnded) client.destroy();
      });
      up.once('connect', () => up.setTimeout(0));
      // Writes before the connect are queued by the socket; later client bytes follow in 'data'.
      for (const d of sent) up.write(d);
      if (client.readableEnded) up.end();
      up.once('data', (first: Buffer) => {
        answered = true;
        piped = true;
        sent.length = 0;
        client.write(first);
        up.pipe(client);
        client.pipe(up);
      });
    };
    attempt(0);
  };

  const { host, port } = splitHostPort(o.listen);
  const server: Server = createServer(handle);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port, host, backlog: listenBacklog() }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  const boundPort = typeof address === 'object' && address ? address.port : port;
  log(
    `listening on ${host}:${boundPort}, backends ${backends.map((b) => `${b.addr} (${b.healthy ? 'healthy' : 'unhealthy'})`).join(', ')}`,
  );
  return {
    port: boundPort,
    health: () => backends.map((b) => ({ backend: b.addr, healthy: b.healthy })),
    close: async () => {
      if (closed) return;
      closed = true;
      clearInterval(timer);
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Parses svc-lb's command line (`--listen`, `--backend` repeated or comma-separated, ...). */
export function parseLoadBalancerArgs(argv: string[]): LoadBalancerOptions {
  const o: LoadBalancerOptions = { listen: '127.0.0.1:6443', backends: [] };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    const eq = arg.indexOf('=');
    const name = eq >= 0 ? arg.slice(0, eq) : arg;
    const value = (): string => {
      if (eq >= 0) return arg.slice(eq + 1);
      const v = argv[++i];
      if (v === undefined) throw new Error(`${name} needs a value`);
      return v;
    };
    const ms = (): number => {
      const v = value();
      const m = /^(\d+(?:\.\d+)?)(ms|s)?$/.exec(v);
      if (!m) throw new Error(`${name}: invalid duration ${JSON.stringify(v)}`);
      return Number(m[1]) * (m[2] === 's' ? 1000 : 1);
    };
    switch (name) {
      case '--listen':
        o.listen = value();
        break;
      case '--backend':
      case '--backends':
        o.backends.push(...value().split(',').filter(Boolean));
        break;
      case '--health-ca-file':
        o.healthCaPem = readFileSync(value(), 'utf8');
        break;
      case '--health-path':
        o.healthPath = value();
        break;
      case '--health-interval':
        o.healthIntervalMs = ms();
        break;
      case '--health-timeout':
        o.healthTimeoutMs = ms();
        break;
      case '--connect-timeout':
        o.connectTimeoutMs = ms();
        break;
      default:
        throw new Error(`unknown flag ${arg}`);
    }
  }
  return o;
}

export const LB_USAGE = `Usage: svc-lb --listen host:port --backend host:port [--backend host:port ...]
A TCP load balancer for API servers: round-robin per connection over the backends whose
health path answers 200; a backend that refuses a connection is skipped at once.
  --listen host:port        address to listen on (default 127.0.0.1:6443)
  --backend host:port       a backend; repeat or separate with commas
  --health-ca-file file     CA of the backends' serving certificates (default: not verified)
  --health-path path        health check path (default /readyz)
  --health-interval 1s      time between health checks of each backend
  --health-timeout 2s       a check slower than this fails
  --connect-timeout 3s      a backend connect slower than this fails over to the next
`;
