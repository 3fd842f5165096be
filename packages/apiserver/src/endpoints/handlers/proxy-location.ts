import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { badRequest, serviceUnavailable, type ApiObject } from '@svc/api';
import type { GenericStore } from '../../registry/store.js';
import { svcletEndpoint } from '../../server/svclet-client.js';

/** Where a proxied request goes: the backend's origin, and whether it is the node agent's own port (reached with the svclet client certificate). */
export interface ProxyLocation {
  url: URL;
  /** The backend's host as Kubernetes' location has it (`ip:port`, or the bare IP for a pod without a port), which the link rewriting compares with. */
  host: string;
  svcletPort?: boolean;
}

/**
 * Go's utilnet.SplitSchemeNamePort: `name`, `name:port` or `scheme:name:port` with scheme
 * `http`, `https` or empty; undefined for anything else.
 */
export function splitSchemeNamePort(id: string): { scheme: string; name: string; port: string } | undefined {
  const parts = id.split(':');
  const [a = '', b = '', c = ''] = parts;
  const split =
    parts.length === 1
      ? { scheme: '', name: a, port: '' }
      : parts.length === 2
        ? { scheme: '', name: a, port: b }
        : parts.length === 3
          ? { scheme: a, name: b, port: c }
          : undefined;
  if (!split || !split.name || !['', 'http', 'https'].includes(split.scheme)) return undefined;
  return split;
}

function ipv4Octets(ip: string): number[] {
  return ip.split('.').map(Number);
}

/** Go's net.IP.IsGlobalUnicast: not unspecified, loopback, multicast, link-local or the IPv4 broadcast address. */
export function isGlobalUnicast(ip: string): boolean {
  const family = isIP(ip);
  if (family === 4) {
    const [a = 0, b = 0] = ipv4Octets(ip);
    if (ip === '0.0.0.0' || ip === '255.255.255.255') return false;
    return a !== 127 && !(a >= 224 && a <= 239) && !(a === 169 && b === 254);
  }
  if (family === 6) {
    const lower = ip.toLowerCase();
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
    if (mapped?.[1]) return isGlobalUnicast(mapped[1]);
    if (lower === '::' || lower === '::1') return false;
    return !lower.startsWith('ff') && !/^fe[89ab]/.test(lower);
  }
  return false;
}

function hostPort(host: string, port: string): string {
  const h = host.includes(':') ? `[${host}]` : host;
  return port ? `${h}:${port}` : h;
}

/** The scheme asked for, http by default (Kubernetes' proxy handler's default). */
const schemeOf = (s: string): string => `${s || 'http'}:`;

/**
 * `pods/<id>/proxy` (Kubernetes' pod ResourceLocation): `id` is `name`, `name:port` or
 * `scheme:name:port`; without a port, the first declared container port; the pod's first IP
 * must be a global unicast address (400 `address not allowed`, also for a pod without one).
 */
export async function podProxyLocation(o: {
  pods: GenericStore;
  namespace: string;
  id: string;
}): Promise<ProxyLocation> {
  const split = splitSchemeNamePort(o.id);
  if (!split) throw badRequest(`invalid pod request ${JSON.stringify(o.id)}`);
  const pod = await o.pods.get(o.namespace, split.name);
  const spec = (pod.spec ?? {}) as { containers?: Array<{ ports?: Array<{ containerPort?: number }> }> };
  let port = split.port;
  if (!port) {
    const first = (spec.containers ?? []).find((c) => (c.ports ?? []).length > 0);
    const p = first?.ports?.[0]?.containerPort;
    if (p !== undefined) port = String(p);
  }
  const status = (pod.status ?? {}) as { podIPs?: Array<{ ip?: string }> };
  const ip = status.podIPs?.[0]?.ip ?? '';
  if (!isGlobalUnicast(ip)) throw badRequest('address not allowed');
  const host = hostPort(ip, port);
  return { url: new URL(`${schemeOf(split.scheme)}//${host}`), host };
}

interface EndpointSubset {
  addresses?: Array<{ ip?: string; targetRef?: { kind?: string; namespace?: string; name?: string } }>;
  ports?: Array<{ name?: string; port?: number }>;
}

/** Kubernetes' isValidAddress: the address names a pod of the namespace that has that IP. */
async function validAddress(
  o: { pods: GenericStore; namespace: string },
  a: NonNullable<EndpointSubset['addresses']>[number],
): Promise<boolean> {
  const ref = a.targetRef;
  if (!ref?.name || ref.namespace !== o.namespace) return false;
  try {
    const pod = await o.pods.get(o.namespace, ref.name);
    const status = (pod.status ?? {}) as { podIP?: string; podIPs?: Array<{ ip?: string }> };
    return status.podIP === a.ip || (status.podIPs ?? []).some((p) => p.ip === a.ip);
  } catch {
    return false;
  }
}

function shuffled<T>(xs: readonly T[]): T[] {
  const out = [...xs];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}

/**
 * `services/<id>/proxy` (Kubernetes' service ResourceLocation): a port number is resolved to
 * the Service's port name (503 `no service port N found for service "x"`), a name is used
 * as it is; then a ready address of the Service's Endpoints with that port, at random, whose
 * pod exists with that IP (503 `no endpoints available for service "x"`).
 */
export async function serviceProxyLocation(o: {
  services: GenericStore;
  endpoints: GenericStore;
  pods: GenericStore;
  namespace: string;
  id: string;
}): Promise<ProxyLocation> {
  const split = splitSchemeNamePort(o.id);
  if (!split) throw badRequest(`invalid service request ${JSON.stringify(o.id)}`);
  let portName = split.port;
  if (/^[+-]?\d+$/.test(portName)) {
    const svc = await o.services.get(o.namespace, split.name);
    const ports = ((svc.spec ?? {}) as { ports?: Array<{ name?: string; port?: number }> }).ports ?? [];
    const hit = ports.find((p) => p.port === Number(portName));
    if (!hit)
      throw serviceUnavailable(`no service port ${Number(portName)} found for service ${JSON.stringify(split.name)}`);
    portName = hit.name ?? '';
  }
  const eps: ApiObject = await o.endpoints.get(o.namespace, split.name);
  const subsets = ((eps as { subsets?: EndpointSubset[] }).subsets ?? []).filter(Boolean);
  const none = serviceUnavailable(`no endpoints available for service ${JSON.stringify(split.name)}`);
  if (subsets.length === 0) throw none;
  for (const ss of shuffled(subsets)) {
    const port = (ss.ports ?? []).find((p) => (p.name ?? '') === portName)?.port;
    if (port === undefined) continue;
    for (const a of shuffled(ss.addresses ?? [])) {
      if (!a.ip || !(await validAddress(o, a))) continue;
      const host = hostPort(a.ip, String(port));
      return { url: new URL(`${schemeOf(split.scheme)}//${host}`), host };
    }
  }
  throw none;
}

/** Kubernetes' isProxyableHostname: every address the host resolves to is global unicast. */
async function proxyable(host: string): Promise<boolean> {
  const ips = isIP(host) ? [host] : (await lookup(host, { all: true }).catch(() => [])).map((a) => a.address);
  return ips.length > 0 && ips.every(isGlobalUnicast);
}

/**
 * `nodes/<id>/proxy` (Kubernetes' node ResourceLocation): the node agent's endpoint (https,
 * with the svclet client certificate) when no port or the agent's port is asked, else the
 * scheme and port asked at the node's address; the address must be global unicast.
 */
export async function nodeProxyLocation(o: {
  nodes: GenericStore;
  preferredAddressTypes: readonly string[];
  id: string;
}): Promise<ProxyLocation> {
  const split = splitSchemeNamePort(o.id);
  if (!split) throw badRequest(`invalid node request ${JSON.stringify(o.id)}`);
  const node = await o.nodes.get('', split.name);
  const agent = svcletEndpoint(node, o.preferredAddressTypes);
  if (!(await proxyable(agent.host))) throw badRequest('address not allowed');
  if (!split.port || split.port === String(agent.port)) {
    const host = hostPort(agent.host, String(agent.port));
    return { url: new URL(`https://${host}`), host, svcletPort: true };
  }
  const host = hostPort(agent.host, split.port);
  return { url: new URL(`${schemeOf(split.scheme)}//${host}`), host };
}
