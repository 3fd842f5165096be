import { freePorts } from './free-port.js';

/**
 * The environment for `scripts/cluster.sh up --nodes 1` on free loopback ports, with the
 * cluster under `dir`, and `extra` more free ports for the test's own servers.
 */
export async function clusterScriptEnv(o: {
  dir: string;
  extra?: number;
  nodeIp?: string;
}): Promise<{ env: NodeJS.ProcessEnv; extraPorts: number[] }> {
  const p = await freePorts(7 + (o.extra ?? 0));
  const at = (i: number): string => String(p[i]);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    SVC_CLUSTER_DIR: o.dir,
    SVC_ETCD_PORT: at(0),
    SVC_ETCD_PEER_PORT: at(1),
    SVC_APISERVER_PORT: at(2),
    SVC_CONTROLLER_MANAGER_PORT: at(3),
    SVC_SCHEDULER_PORT: at(4),
    // Node 1 serves on base+1 and base+100.
    SVC_NODE_PORT_BASE: String(Number(at(5)) - 1),
    SVC_NODE_HEALTHZ_PORT_BASE: String(Number(at(6)) - 100),
  };
  if (o.nodeIp) env.SVC_NODE_IP = o.nodeIp;
  return { env, extraPorts: p.slice(7) };
}
