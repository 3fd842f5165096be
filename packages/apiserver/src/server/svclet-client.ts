import { readFileSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { Agent, request as httpsRequest } from 'node:https';
import type { ApiObject } from '@svc/api';
import { proxyUpgrade, type UpgradeProxyOptions } from '@svc/component-base';
import { ConfigurationError, type SvcletClientFlags } from '../options.js';

/** The node agent's port when the Node does not report one (Kubernetes' kubelet port). */
export const DEFAULT_SVCLET_PORT = 10250;

/** A node's agent endpoint could not be worked out from the Node object. */
export class NodeConnectionError extends Error {}

/**
 * Where the agent of `node` serves: the first address of the first preferred type that the
 * Node reports, and `status.daemonEndpoints.kubeletEndpoint.Port` (Kubernetes' field name,
 * as the schema keeps `nodeInfo.kubeletVersion`), else the default port.
 */
export function svcletEndpoint(node: ApiObject, preferred: readonly string[]): { host: string; port: number } {
  const status = (node.status ?? {}) as {
    addresses?: Array<{ type?: string; address?: string }>;
    daemonEndpoints?: { kubeletEndpoint?: { Port?: number } };
  };
  const addresses = status.addresses ?? [];
  const port = status.daemonEndpoints?.kubeletEndpoint?.Port;
  for (const type of preferred) {
    const hit = addresses.find((a) => a.type === type && a.address);
    if (hit?.address)
      return { host: hit.address, port: typeof port === 'number' && port > 0 ? port : DEFAULT_SVCLET_PORT };
  }
  // Go's %v of []NodeAddress, as Kubernetes' NoMatchError prints it.
  const known = addresses.map((a) => `{${a.type ?? ''} ${a.address ?? ''}}`).join(' ');
  throw new NodeConnectionError(`no preferred addresses found; known addresses: [${known}]`);
}

/**
 * HTTPS to node agents with the `--svclet-*` settings: the client certificate presented to
 * them, the CA their serving certificates must chain to (without one, as Kubernetes, the
 * serving certificate is not verified), and a timeout that bounds connecting and the TLS
 * handshake only, so that followed streams may last.
 */
export class SvcletClient {
  private readonly agent: Agent;

  /** Reads the files now; a file that does not read is a `ConfigurationError`. */
  constructor(private readonly flags: SvcletClientFlags) {
    const read = (flag: string, file: string | undefined): string | undefined => {
      if (!file) return undefined;
      try {
        return readFileSync(file, 'utf8');
      } catch (e) {
        throw new ConfigurationError(`${flag}: ${(e as Error).message}`);
      }
    };
    const ca = read('--svclet-certificate-authority', flags.certificateAuthority);
    this.agent = new Agent({
      keepAlive: false,
      cert: read('--svclet-client-certificate', flags.clientCertificate),
      key: read('--svclet-client-key', flags.clientKey),
      ca,
      rejectUnauthorized: ca !== undefined,
    });
  }

  /** The TLS settings above, for a proxy to the node agent (`nodes/proxy`). */
  get tlsAgent(): Agent {
    return this.agent;
  }

  get preferredAddressTypes(): readonly string[] {
    return this.flags.preferredAddressTypes;
  }

  /**
   * GETs `url` on a node agent; resolves with the response once its headers arrive. Aborting
   * `signal` destroys the request and the response. Errors read as Go's (`Get "<url>": ...`).
   */
  get(url: URL, signal: AbortSignal): Promise<IncomingMessage> {
    return new Promise((resolve, reject) => {
      const fail = (e: Error): void => reject(new Error(`Get ${JSON.stringify(url.toString())}: ${e.message}`));
      const req = httpsRequest(url, { method: 'GET', agent: this.agent, signal }, (res) => {
        clearTimeout(timer);
        resolve(res);
      });
      const timer =
        this.flags.timeoutMs > 0
          ? setTimeout(() => req.destroy(new Error(`dial tcp ${url.host}: i/o timeout`)), this.flags.timeoutMs)
          : undefined;
      req.on('socket', (s) => s.once('secureConnect', () => clearTimeout(timer)));
      req.on('error', (e) => {
        clearTimeout(timer);
        fail(e);
      });
      req.end();
    });
  }

  /**
   * Passes an upgrade request (exec, attach, port-forward) on to a node agent with these TLS
   * settings; the timeout bounds the agent's answer. See `proxyUpgrade`.
   */
  upgrade(o: Omit<UpgradeProxyOptions, 'agent' | 'timeoutMs'>): ReturnType<typeof proxyUpgrade> {
    return proxyUpgrade({ ...o, agent: this.agent, timeoutMs: this.flags.timeoutMs });
  }

  close(): void {
    this.agent.destroy();
  }
}
