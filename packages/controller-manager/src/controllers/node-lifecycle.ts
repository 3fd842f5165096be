import { setTimeout as delay } from 'node:timers/promises';
import {
  isNotFound,
  naming,
  nodeTaintKey,
  type Lease,
  type Node,
  type NodeCondition,
  type NodeTaintName,
  type Pod,
  type Taint,
} from '@svc/api';
import { ResourceClient, objectKey } from '@svc/client';
import {
  informer,
  newController,
  runAll,
  type ControllerDefinition,
  type RunnableController,
} from '../controller-context.js';
import { R } from '../resources.js';
import { RateLimitedTimedQueue } from './rate-limited-timed-queue.js';
import { nodeCondition, nowTime, podsOnNode, sameTaint, swapNodeTaints } from './node-taints.js';

const NAME = 'node-lifecycle-controller';

/** Kubernetes' `--unhealthy-zone-threshold` default: the share of not-ready nodes that makes a zone partially disrupted. */
const UNHEALTHY_ZONE_THRESHOLD = 0.55;
/** Kubernetes' NodeEvictionPeriod: how often the NoExecute tainting queue is tried. */
const TAINT_PERIOD_MS = 100;
/** Kubernetes' NodeHealthUpdateRetry. */
const HEALTH_UPDATE_RETRIES = 5;
/** Kubernetes' nodeUpdateWorkerSize / podUpdateWorkerSize. */
const NODE_WORKERS = 8;
const POD_WORKERS = 4;

/** The conditions whose status the controller sets to Unknown when a node stops reporting (not NetworkUnavailable, as Kubernetes). */
const AGENT_CONDITIONS = ['Ready', 'MemoryPressure', 'DiskPressure', 'PIDPressure'];

/** Kubernetes' TaintNodesByCondition map: condition type → status → NoSchedule taint. */
const CONDITION_TAINTS: Record<string, Record<string, NodeTaintName>> = {
  Ready: { False: 'not-ready', Unknown: 'unreachable' },
  MemoryPressure: { True: 'memory-pressure' },
  DiskPressure: { True: 'disk-pressure' },
  NetworkUnavailable: { True: 'network-unavailable' },
  PIDPressure: { True: 'pid-pressure' },
};
const NO_SCHEDULE_KEYS: readonly NodeTaintName[] = [
  'not-ready',
  'unreachable',
  'memory-pressure',
  'disk-pressure',
  'network-unavailable',
  'pid-pressure',
  'unschedulable',
];

type ZoneState = 'Initial' | 'Normal' | 'PartialDisruption' | 'FullDisruption';

/** What the controller last saw of a node, with its own clock's time of the last sign of life (no clock skew across machines). */
interface NodeHealth {
  probeTimestamp: number;
  readyTransitionTimestamp: number;
  status: Node['status'];
  lease?: Lease;
}

/** Kubernetes' ComputeZoneState over the nodes' Ready conditions. */
function zoneStateOf(ready: ReadonlyArray<NodeCondition | undefined>): ZoneState {
  const readyNodes = ready.filter((c) => c?.status === 'True').length;
  const notReady = ready.length - readyNodes;
  if (readyNodes === 0 && notReady > 0) return 'FullDisruption';
  if (notReady > 2 && notReady / ready.length >= UNHEALTHY_ZONE_THRESHOLD) return 'PartialDisruption';
  return 'Normal';
}

/** Runs `fn` over `items` with at most `limit` at once. */
async function forEachLimited<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) await fn(items[next++] as T);
    }),
  );
}

/**
 * `node-lifecycle-controller` (`nodelifecycle`), as Kubernetes':
 * - every `--node-monitor-period` each node's last sign of life (a newer Lease renewTime in the
 *   node-lease namespace or a changed Ready heartbeat, timed by this controller's clock) is
 *   checked; past `--node-monitor-grace-period` (`--node-startup-grace-period` for a node that
 *   never reported Ready, counted from its creation) its Ready, MemoryPressure, DiskPressure
 *   and PIDPressure conditions become Unknown through `/status`, and its pods' Ready
 *   conditions False;
 * - a node observed Unknown (False) is queued for the NoExecute `unreachable` (`not-ready`)
 *   taint, handed out at `--node-eviction-rate` nodes per second; with more than 2 and at
 *   least 55 % of the nodes not ready the rate is `--secondary-node-eviction-rate` above
 *   `--large-cluster-size-threshold` nodes and 0 below; with no node ready no node is
 *   tainted and the NoExecute taints come off (one zone: the whole cluster);
 * - a node Ready again loses both NoExecute taints;
 * - NoSchedule taints follow the node's conditions and `spec.unschedulable` on every change.
 * State is in memory: a new leader starts timing every node afresh and first takes the
 * NoExecute taints off, as Kubernetes does.
 */
export const nodeLifecycleController: ControllerDefinition = {
  name: NAME,
  build(ctx) {
    const o = ctx.options;
    const log = ctx.logger.with({ controller: NAME });
    const leaseNamespace = naming().nodeLeaseNamespace;
    const nodes = informer<Node>(ctx, R.nodes());
    const leases = informer<Lease>(ctx, R.leases(), leaseNamespace);
    const pods = informer<Pod>(ctx, R.pods());
    const podsOn = podsOnNode(pods);
    const nodeApi = new ResourceClient<Node>(ctx.client, R.nodes());
    const podApi = new ResourceClient<Pod>(ctx.client, R.pods());
    const agent = naming().nodeAgentName.charAt(0).toUpperCase() + naming().nodeAgentName.slice(1);
    const unreachable: Taint = { key: nodeTaintKey('unreachable'), effect: 'NoExecute' };
    const notReady: Taint = { key: nodeTaintKey('not-ready'), effect: 'NoExecute' };
    const hasTaint = (node: Node, t: Taint): boolean => (node.spec?.taints ?? []).some((x) => sameTaint(x, t));

    const health = new Map<string, NodeHealth>();
    const known = new Set<string>();
    const podsToRetry = new Set<string>();
    const tainter = new RateLimitedTimedQueue(o.nodeEvictionRate);
    let zoneState: ZoneState | undefined;

    /** Takes both NoExecute taints off and forgets the node in the tainting queue; true when it was queued. */
    async function markNodeAsReachable(node: Node): Promise<boolean> {
      if (hasTaint(node, unreachable) || hasTaint(node, notReady))
        await swapNodeTaints(nodeApi, node, { add: [], remove: [unreachable, notReady] });
      return tainter.remove(node.metadata.name ?? '');
    }

    function markNodeForTainting(node: Node, status: 'False' | 'Unknown'): boolean {
      const name = node.metadata.name ?? '';
      if (!hasTaint(node, status === 'False' ? notReady : unreachable)) tainter.remove(name);
      return tainter.add(name, node.metadata.uid ?? '');
    }

    /** Kubernetes' MarkPodsNotReady: each pod's Ready condition becomes False; false when a write failed. */
    async function markPodsNotReady(list: readonly Pod[], nodeName: string): Promise<boolean> {
      let ok = true;
      for (const p of list) {
        const ready = p.status?.conditions?.find((c) => c.type === 'Ready');
        if (p.spec?.nodeName !== nodeName || !ready || ready.status === 'False') continue;
        const next = structuredClone(p);
        const c = next.status?.conditions?.find((x) => x.type === 'Ready');
        if (!c) continue;
        c.status = 'False';
        c.lastTransitionTime = nowTime();
        try {
          await podApi.namespace(p.metadata.namespace ?? '').update(next, { subresource: 'status' });
          log.v(2).info('marked pod not ready', { pod: objectKey(p), node: nodeName });
        } catch (e) {
          if (isNotFound(e)) continue;
          log.warn('failed to mark pod not ready', { pod: objectKey(p), error: String(e) });
          ok = false;
        }
      }
      return ok;
    }

    /**
     * Kubernetes' tryUpdateNodeHealth: records signs of life, and past the grace period writes
     * the agent's conditions as Unknown. Answers the Ready condition as observed before and as
     * it is now (undefined: never reported and not yet timed out). Throws when the write fails.
     */
    async function tryUpdateNodeHealth(node: Node): Promise<{ observed: NodeCondition; current?: NodeCondition }> {
      const name = node.metadata.name ?? '';
      const created = node.metadata.creationTimestamp;
      const ready = nodeCondition(node, 'Ready');
      let h = health.get(name);
      let observed: NodeCondition;
      let grace: number;
      if (!ready) {
        observed = { type: 'Ready', status: 'Unknown', lastHeartbeatTime: created, lastTransitionTime: created };
        grace = o.nodeStartupGracePeriodMs;
        const since = Date.parse(created ?? '') || Date.now();
        h = h
          ? { ...h, status: node.status }
          : { status: node.status, probeTimestamp: since, readyTransitionTimestamp: since };
      } else {
        observed = { ...ready };
        grace = o.nodeMonitorGracePeriodMs;
      }
      const saved = h?.status?.conditions?.find((c) => c.type === 'Ready');
      const now = Date.now();
      if (!h || (!saved && ready) || (saved && !ready)) {
        h = { status: node.status, probeTimestamp: now, readyTransitionTimestamp: now };
      } else if (saved && ready && saved.lastHeartbeatTime !== ready.lastHeartbeatTime) {
        h = {
          status: node.status,
          probeTimestamp: now,
          readyTransitionTimestamp:
            saved.lastTransitionTime !== ready.lastTransitionTime ? now : h.readyTransitionTimestamp,
        };
      }
      // A renewed Lease is a sign of life even when the status is never posted (Kubernetes).
      const lease = leases.store.get(`${leaseNamespace}/${name}`);
      const renewed = (prev: string | undefined, next: string | undefined): boolean =>
        prev !== undefined && next !== undefined && Date.parse(next) > Date.parse(prev);
      if (lease && (!h.lease || renewed(h.lease.spec?.renewTime, lease.spec?.renewTime)))
        h = { ...h, lease, probeTimestamp: now };
      health.set(name, h);
      if (Date.now() <= h.probeTimestamp + grace) return { observed, current: ready };

      const next = structuredClone(node);
      const conditions = ((next.status ??= {}).conditions ??= []);
      const stamp = nowTime();
      for (const type of AGENT_CONDITIONS) {
        const c = conditions.find((x) => x.type === type);
        if (!c) {
          conditions.push({
            type,
            status: 'Unknown',
            reason: 'NodeStatusNeverUpdated',
            message: `${agent} never posted node status.`,
            lastHeartbeatTime: created,
            lastTransitionTime: stamp,
          });
        } else if (c.status !== 'Unknown') {
          Object.assign(c, {
            status: 'Unknown',
            reason: 'NodeStatusUnknown',
            message: `${agent} stopped posting node status.`,
            lastTransitionTime: stamp,
          });
        }
      }
      const current = conditions.find((c) => c.type === 'Ready');
      // Written only when Ready changed (Kubernetes compares Ready alone).
      if (ready?.status === 'Unknown') return { observed, current };
      await nodeApi.update(next, { subresource: 'status' });
      log.info('node stopped reporting; its conditions are now Unknown', {
        node: name,
        sinceMs: Date.now() - h.probeTimestamp,
      });
      health.set(name, {
        status: next.status,
        probeTimestamp: h.probeTimestamp,
        readyTransitionTimestamp: Date.now(),
        lease: h.lease,
      });
      return { observed, current };
    }

    /** Kubernetes' processTaintBaseEviction, on the Ready status observed before this pass. */
    async function processTaintBasedEviction(node: Node, observed: string): Promise<void> {
      if (observed === 'False' || observed === 'Unknown') {
        const [want, opposite] = observed === 'False' ? [notReady, unreachable] : [unreachable, notReady];
        // A node already tainted the other way is switched at once, outside the rate limit.
        if (hasTaint(node, opposite)) await swapNodeTaints(nodeApi, node, { add: [want], remove: [opposite] });
        else if (markNodeForTainting(node, observed))
          log.v(2).info('node queued for the NoExecute taint', { node: node.metadata.name, ready: observed });
      } else if (observed === 'True' && (await markNodeAsReachable(node))) {
        log.v(2).info('node is healthy again; NoExecute taints removed', { node: node.metadata.name });
      }
    }

    function setLimiter(zoneSize: number, state: ZoneState): void {
      if (state === 'PartialDisruption')
        tainter.swapLimiter(zoneSize > o.largeClusterSizeThreshold ? o.secondaryNodeEvictionRate : 0);
      else tainter.swapLimiter(o.nodeEvictionRate);
    }

    /** Kubernetes' handleDisruption for one zone holding every node. */
    async function handleDisruption(
      ready: ReadonlyArray<NodeCondition | undefined>,
      all: readonly Node[],
    ): Promise<void> {
      if (ready.length === 0) {
        zoneState = undefined;
        return;
      }
      const state = zoneStateOf(ready);
      const was = zoneState ?? 'Initial';
      if (state === 'FullDisruption' && was === 'FullDisruption') return;
      if (state === 'FullDisruption') {
        log.info('no node is ready: entering master disruption mode, NoExecute tainting stops');
        for (const n of all)
          await markNodeAsReachable(n).catch((e: unknown) =>
            log.warn('failed to remove taints', { node: n.metadata.name, error: String(e) }),
          );
        tainter.swapLimiter(0);
        zoneState = state;
        return;
      }
      if (was === 'FullDisruption') {
        log.info('some nodes are ready: exiting master disruption mode');
        const now = Date.now();
        for (const n of all) {
          const h = health.get(n.metadata.name ?? '');
          if (h) health.set(n.metadata.name ?? '', { ...h, probeTimestamp: now, readyTransitionTimestamp: now });
        }
      } else if (was !== state) {
        log.info('zone is now in a new state', { state });
      }
      setLimiter(ready.length, state);
      zoneState = state;
    }

    async function monitorNodeHealth(): Promise<void> {
      const all = nodes.store.list();
      for (const n of all) {
        const name = n.metadata.name ?? '';
        if (known.has(name)) continue;
        known.add(name);
        await markNodeAsReachable(n).catch((e: unknown) =>
          log.warn('failed to remove taints', { node: name, error: String(e) }),
        );
      }
      for (const name of known) {
        if (nodes.store.get(name)) continue;
        known.delete(name);
        health.delete(name);
        podsToRetry.delete(name);
        tainter.remove(name);
      }
      const readyConditions: Array<NodeCondition | undefined> = [];
      await forEachLimited(all, NODE_WORKERS, async (cached) => {
        const name = cached.metadata.name ?? '';
        let node = cached;
        let r: Awaited<ReturnType<typeof tryUpdateNodeHealth>>;
        for (let attempt = 1; ; attempt++) {
          try {
            r = await tryUpdateNodeHealth(node);
            break;
          } catch (e) {
            if (attempt >= HEALTH_UPDATE_RETRIES) {
              log.warn('failed to update node health; skipping it this pass', { node: name, error: String(e) });
              return;
            }
          }
          try {
            node = await nodeApi.get(name);
          } catch (e) {
            log.warn('failed to read node to retry its health update', { node: name, error: String(e) });
            return;
          }
        }
        readyConditions.push(r.current);
        if (!r.current) return;
        try {
          await processTaintBasedEviction(node, r.observed.status);
        } catch (e) {
          log.warn('failed to update NoExecute taints; retrying next pass', { node: name, error: String(e) });
        }
        const becameNotReady = r.current.status !== 'True' && r.observed.status === 'True';
        if (becameNotReady) log.info('node is not ready', { node: name, ready: r.current.status });
        if (becameNotReady || (podsToRetry.has(name) && r.observed.status !== 'True')) {
          if (!(await markPodsNotReady(podsOn(name), name))) {
            podsToRetry.add(name);
            return;
          }
        }
        podsToRetry.delete(name);
      });
      await handleDisruption(readyConditions, all);
    }

    /** One pass of the NoExecute tainting queue; `unreachable` and `not-ready` exclude each other, following Ready. */
    async function taintPass(): Promise<void> {
      await tainter.try(async (name) => {
        const node = nodes.store.get(name);
        if (!node) return { done: true };
        const ready = nodeCondition(node, 'Ready');
        if (!ready) return { done: false, retryAfterMs: 50 };
        if (ready.status !== 'False' && ready.status !== 'Unknown') return { done: true };
        const [want, opposite] = ready.status === 'False' ? [notReady, unreachable] : [unreachable, notReady];
        try {
          if (await swapNodeTaints(nodeApi, node, { add: [want], remove: [opposite] }))
            log.info('node tainted', { node: name, taint: want.key, effect: want.effect });
          return { done: true };
        } catch (e) {
          log.warn('failed to taint node', { node: name, error: String(e) });
          return { done: false, retryAfterMs: 0 };
        }
      });
    }

    // NoSchedule taints follow the conditions on every node change (Kubernetes' doNoScheduleTaintingPass).
    const noSchedule = newController(ctx, {
      name: NAME,
      queueName: 'node_lifecycle_controller',
      workers: NODE_WORKERS,
      reconcile: async (name) => {
        const node = nodes.store.get(name);
        if (!node) return;
        const want: Taint[] = [];
        for (const c of node.status?.conditions ?? []) {
          const key = CONDITION_TAINTS[c.type]?.[c.status];
          if (key) want.push({ key: nodeTaintKey(key), effect: 'NoSchedule' });
        }
        if (node.spec?.unschedulable) want.push({ key: nodeTaintKey('unschedulable'), effect: 'NoSchedule' });
        const managed = new Set(NO_SCHEDULE_KEYS.map(nodeTaintKey));
        const have = (node.spec?.taints ?? []).filter((t) => t.effect === 'NoSchedule' && managed.has(t.key));
        const add = want.filter((w) => !have.some((t) => sameTaint(t, w)));
        const remove = have.filter((t) => !want.some((w) => sameTaint(t, w)));
        if (add.length > 0 || remove.length > 0) await swapNodeTaints(nodeApi, node, { add, remove });
      },
    });
    noSchedule.watch(nodes);

    // A pod newly bound to a node known not ready is marked not ready at once (Kubernetes' processPod).
    const podsBound = newController(ctx, {
      name: NAME,
      queueName: 'node_lifecycle_controller_pods',
      workers: POD_WORKERS,
      reconcile: async (key) => {
        const pod = pods.store.get(key);
        const nodeName = pod?.spec?.nodeName;
        if (!pod || !nodeName) return;
        const ready = health.get(nodeName)?.status?.conditions?.find((c) => c.type === 'Ready');
        if (!ready || ready.status === 'True') return;
        if (!(await markPodsNotReady([pod], nodeName))) throw new Error(`pod ${key} could not be marked not ready`);
      },
    });
    // Watched only so `run` waits for the cache; keys come from the handler below.
    podsBound.watch(pods, () => []);
    pods.addEventHandler({
      onAdd: (p) => {
        if (p.spec?.nodeName) podsBound.enqueue(objectKey(p));
      },
      onUpdate: (old, p) => {
        if (p.spec?.nodeName && p.spec.nodeName !== old.spec?.nodeName) podsBound.enqueue(objectKey(p));
      },
    });

    const monitor: RunnableController = {
      run: async (signal) => {
        try {
          await Promise.all(
            [nodes, leases, pods].map((i) => i.waitForSync({ signal, timeoutMs: Number.MAX_SAFE_INTEGER })),
          );
        } catch {
          return;
        }
        const pause = (ms: number): Promise<void> => delay(ms, undefined, { signal }).catch(() => undefined);
        const tainting = (async () => {
          while (!signal.aborted) {
            await taintPass();
            await pause(TAINT_PERIOD_MS);
          }
        })();
        while (!signal.aborted) {
          try {
            await monitorNodeHealth();
          } catch (e) {
            log.error('error monitoring node health', { error: String(e) });
          }
          await pause(o.nodeMonitorPeriodMs);
        }
        await tainting;
      },
    };
    return runAll([noSchedule, podsBound, monitor]);
  },
};
