import { request as httpsRequest } from 'node:https';
import type { IncomingMessage } from 'node:http';
import { notFound, type ApiObject, type ComponentStatus, type ResourceType } from '@svc/api';
import type { ReadOnlyHandler } from './read-only.js';

/** Kubernetes' componentstatus probeTimeOut: each probe gives up after 20 s. */
export const PROBE_TIMEOUT_MS = 20_000;

/**
 * Where Kubernetes looks for the controller manager and the scheduler: fixed ports on the
 * API server's own host (ports.KubeControllerManagerPort, DefaultKubeSchedulerPort), whatever
 * `--secure-port` they were started with. svc's components default to the same ports
 * (svc-controller-manager and svc-scheduler `--secure-port`).
 */
export const CONTROLLER_MANAGER_PORT = 10257;
export const SCHEDULER_PORT = 10259;

/** Kubernetes' HTTP prober reads at most 10 KiB of a body (the rest is dropped). */
const MAX_BODY_BYTES = 10 * 1024;

/** One probe's outcome as the `Healthy` condition carries it. */
export interface ComponentHealth {
  status: 'True' | 'False' | 'Unknown';
  message: string;
  error: string;
}

/** A component the API server checks: its ComponentStatus name and how it is probed. */
export interface ComponentProbe {
  name: string;
  check(): Promise<ComponentHealth>;
}

/** The text Go's net/http gives a failed request (what Kubernetes' prober puts in the message). */
function goRequestError(url: string, err: NodeJS.ErrnoException, timedOut: boolean): string {
  const address = new URL(url).host;
  if (timedOut) return `Get "${url}": context deadline exceeded (Client.Timeout exceeded while awaiting headers)`;
  if (err.code === 'ECONNREFUSED') return `Get "${url}": dial tcp ${address}: connect: connection refused`;
  if (err.code === 'ECONNRESET') return `Get "${url}": read tcp ${address}: connection reset by peer`;
  if (err.code === 'EHOSTUNREACH') return `Get "${url}": dial tcp ${address}: connect: no route to host`;
  return `Get "${url}": ${err.message}`;
}

function readAtMost(res: IncomingMessage, limit: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    res.on('data', (c: Buffer) => {
      if (size >= limit) return;
      chunks.push(c.subarray(0, limit - size));
      size += Math.min(c.length, limit - size);
      if (size >= limit) {
        resolve(Buffer.concat(chunks).toString('utf8'));
        res.destroy();
      }
    });
    res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    res.on('error', reject);
  });
}

/**
 * An HTTPS GET of a health endpoint without verifying the server's certificate, as
 * Kubernetes' componentstatus HttpServer with its HTTP prober: 2xx is Healthy True with the
 * body as message; 3xx is Unknown ("Probe terminated redirects"); any other code is False
 * with "HTTP probe failed with statuscode: N"; a failed request is False with Go's error
 * text in the message (Kubernetes' prober turns request errors into failures).
 */
export function httpsHealthProbe(o: {
  name: string;
  host: string;
  port: number;
  path: string;
  timeoutMs?: number;
}): ComponentProbe {
  const url = `https://${o.host.includes(':') ? `[${o.host}]` : o.host}:${o.port}${o.path}`;
  const timeoutMs = o.timeoutMs ?? PROBE_TIMEOUT_MS;
  const check = (): Promise<ComponentHealth> =>
    new Promise((resolve) => {
      let timedOut = false;
      const req = httpsRequest(url, { method: 'GET', rejectUnauthorized: false, headers: { Accept: '*/*' } });
      const timer = setTimeout(() => {
        timedOut = true;
        req.destroy(new Error('timeout'));
      }, timeoutMs);
      req.on('error', (err: NodeJS.ErrnoException) => {
        clearTimeout(timer);
        resolve({ status: 'False', message: goRequestError(url, err, timedOut), error: '' });
      });
      req.on('response', (res) => {
        readAtMost(res, MAX_BODY_BYTES).then(
          (body) => {
            clearTimeout(timer);
            const code = res.statusCode ?? 0;
            if (code >= 200 && code < 300) resolve({ status: 'True', message: body, error: '' });
            else if (code >= 300 && code < 400)
              resolve({ status: 'Unknown', message: `Probe terminated redirects, Response body: ${body}`, error: '' });
            else resolve({ status: 'False', message: `HTTP probe failed with statuscode: ${code}`, error: '' });
          },
          (err: NodeJS.ErrnoException) => {
            clearTimeout(timer);
            resolve({ status: 'False', message: '', error: err.message });
          },
        );
      });
      req.end();
    });
  return { name: o.name, check };
}

/** What a store probe needs: a fresh client's health check, then its close (Kubernetes' CreateProber). */
export interface StoreClient {
  healthCheck(timeoutMs: number): Promise<void>;
  close(): Promise<void>;
}

/**
 * A store (etcd) probe, as Kubernetes' EtcdServer: a new client per check, a health read
 * within the probe timeout; Healthy True with message "ok", else False with the error.
 */
export function storeHealthProbe(o: { name: string; connect: () => StoreClient; timeoutMs?: number }): ComponentProbe {
  const timeoutMs = o.timeoutMs ?? PROBE_TIMEOUT_MS;
  const check = async (): Promise<ComponentHealth> => {
    let client: StoreClient;
    try {
      client = o.connect();
    } catch (err) {
      return { status: 'False', message: '', error: (err as Error).message };
    }
    try {
      await client.healthCheck(timeoutMs);
      return { status: 'True', message: 'ok', error: '' };
    } catch (err) {
      return { status: 'False', message: '', error: (err as Error).message };
    } finally {
      await client.close().catch(() => undefined);
    }
  };
  return { name: o.name, check };
}

/**
 * The components Kubernetes' storage_core.go checks: `controller-manager` and `scheduler` at
 * https://127.0.0.1:<port>/healthz, then `etcd-<i>` for each store configuration (the main
 * `--store-servers` first, then each distinct overridden set).
 */
export function controlPlaneProbes(o: {
  stores: ReadonlyArray<() => StoreClient>;
  timeoutMs?: number;
}): ComponentProbe[] {
  const local = { host: '127.0.0.1', path: '/healthz', timeoutMs: o.timeoutMs };
  return [
    httpsHealthProbe({ ...local, name: 'controller-manager', port: CONTROLLER_MANAGER_PORT }),
    httpsHealthProbe({ ...local, name: 'scheduler', port: SCHEDULER_PORT }),
    ...o.stores.map((connect, i) => storeHealthProbe({ name: `etcd-${i}`, connect, timeoutMs: o.timeoutMs })),
  ];
}

/** A ComponentStatus object for one probe's outcome (only a name, as Kubernetes' own). */
function componentStatusOf(type: ResourceType, name: string, h: ComponentHealth): ComponentStatus {
  const status: ComponentStatus = {
    kind: type.kind,
    apiVersion: type.version,
    metadata: { name },
    // message and error are omitempty in Kubernetes' ComponentCondition.
    conditions: [
      {
        type: 'Healthy',
        status: h.status,
        ...(h.message && { message: h.message }),
        ...(h.error && { error: h.error }),
      },
    ],
  };
  return status;
}

/**
 * core/v1 componentstatuses (Kubernetes' componentstatus REST): nothing stored; a list probes
 * every component at once and keeps what the label and field selectors match (Kubernetes'
 * DefaultPredicateFunc over the object's metadata); a get probes the one named. A name not
 * probed is a 404 NotFound (`componentstatuses "<name>" not found`), where Kubernetes 1.32
 * answers its plain error "Component not found: <name>" as a 500: svc answers no request
 * with a 500 that is not a server fault.
 */
export function componentStatusHandler(o: {
  type: ResourceType;
  probes: () => readonly ComponentProbe[];
}): ReadOnlyHandler {
  const probeOne = async (p: ComponentProbe): Promise<ApiObject> => componentStatusOf(o.type, p.name, await p.check());
  return {
    type: o.type,
    warning: `${o.type.version} ${o.type.kind} is deprecated in v1.19+`,
    async get(name) {
      const probe = o.probes().find((p) => p.name === name);
      if (!probe) throw notFound({ group: o.type.group, resource: o.type.plural }, name);
      return probeOne(probe);
    },
    async list(p) {
      const all = await Promise.all(o.probes().map(probeOne));
      return all.filter(
        (obj) => (!p.labelMatch || p.labelMatch(obj.metadata.labels ?? {})) && (!p.fieldMatch || p.fieldMatch(obj)),
      );
    },
  };
}
