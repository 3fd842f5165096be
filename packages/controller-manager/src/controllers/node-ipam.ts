import { isNotFound, isStatusError, type Node } from '@svc/api';
import { EventRecorder, ResourceClient } from '@svc/client';
import { informer, newController, type ControllerDefinition } from '../controller-context.js';
import { R } from '../resources.js';
import { CidrSet, formatCidr, overlaps, parseCidr, type Cidr } from './node-ipam-cidr.js';
import { CidrSetMetrics } from './node-ipam-metrics.js';

const NAME = 'node-ipam-controller';
/** Kubernetes' cidrUpdateRetries: patch attempts before CIDRAssignmentFailed. */
const PATCH_RETRIES = 3;
/** Kubernetes' cidrUpdateWorkers. */
const WORKERS = 30;

/** Kubernetes' IsServerTimeout: the server could not finish in time (the write may still land). */
const isServerTimeout = (e: unknown): boolean => isStatusError(e) && e.status.reason === 'ServerTimeout';

const podCidrsOf = (n: Node): string[] => {
  const s = n.spec;
  if (s?.podCIDRs && s.podCIDRs.length > 0) return [...s.podCIDRs];
  return s?.podCIDR ? [s.podCIDR] : [];
};

/**
 * `node-ipam-controller` (`nodeipam`) with Kubernetes' RangeAllocator: one CidrSet per cluster
 * CIDR (`--cluster-cidr`, one per family), the Service ranges taken out of them; once the node
 * cache has synced, the podCIDRs nodes already have are marked used; then every node without
 * `spec.podCIDRs` gets the next free block of each set, patched into `spec.podCIDR` and
 * `spec.podCIDRs`; a deleted node's blocks go back to the pool. When a set is exhausted the node
 * gets the Normal event `CIDRNotAvailable` ("Node <name> status is now: CIDRNotAvailable") and is
 * retried with back-off; as in Kubernetes, the RangeAllocator sets no node condition (only the
 * cloud allocator and the route controller touch NetworkUnavailable). Without
 * `--allocate-node-cidrs` the controller is skipped, with a log line.
 */
export const nodeIpamController: ControllerDefinition = {
  name: NAME,
  build(ctx) {
    const log = ctx.logger.with({ controller: NAME });
    const cfg = ctx.options.nodeIpam;
    if (!cfg.allocateNodeCidrs) {
      log.info('Skipping controller: --allocate-node-cidrs is false');
      return { run: () => Promise.resolve() };
    }
    const sets = cfg.clusterCidrs.map((c, i) => new CidrSet(c, cfg.nodeMaskSizes[i] ?? 0));
    const metrics = new CidrSetMetrics(ctx.metrics.registry);
    for (const service of cfg.serviceCidrs)
      sets.forEach((set) => {
        if (overlaps(set.cluster, service)) metrics.changed(set, { allocated: set.occupy(service) });
      });
    sets.forEach((set) => metrics.changed(set, {}));
    const nodes = informer<Node>(ctx, R.nodes());
    const nodeApi = new ResourceClient<Node>(ctx.client, R.nodes());
    const events = new EventRecorder(ctx.client, { component: 'cidrAllocator', logger: log });
    /** Nodes patched here whose update the cache may not show yet: name → (uid, CIDRs). */
    const assigned = new Map<string, { uid: string; cidrs: string[] }>();
    /** Nodes that found a pool exhausted: tried again at once when blocks are released. */
    const starved = new Set<string>();
    let started = false;

    const record = (node: Node, reason: string): void =>
      events.event({
        object: node,
        apiVersion: 'v1',
        kind: 'Node',
        type: 'Normal',
        reason,
        message: `Node ${node.metadata.name ?? ''} status is now: ${reason}`,
      });

    /** Marks a node's podCIDRs used; one outside the cluster CIDRs is logged (Kubernetes fails instead). */
    const occupy = (node: Node): void => {
      podCidrsOf(node).forEach((text, i) => {
        try {
          const set = sets[i];
          if (!set) throw new Error(`index ${i} has no cluster CIDR`);
          metrics.changed(set, { allocated: set.occupy(parseCidr(text)) });
        } catch (e) {
          log.error('cannot mark the podCIDR of a node used', {
            node: node.metadata.name,
            cidr: text,
            error: (e as Error).message,
          });
        }
      });
    };

    const release = (node: Node): void => {
      const name = node.metadata.name ?? '';
      assigned.delete(name);
      starved.delete(name);
      podCidrsOf(node).forEach((text, i) => {
        try {
          const set = sets[i];
          if (set) metrics.changed(set, { released: set.release(parseCidr(text)) });
        } catch (e) {
          log.error('cannot release the podCIDR of a node', { node: name, cidr: text, error: String(e) });
        }
      });
      // Kubernetes leaves them to their back-off (up to 1000 s); a freed block is offered at once.
      if (podCidrsOf(node).length > 0) for (const waiting of starved) controller.enqueue(waiting);
    };

    const releaseAll = (cidrs: readonly Cidr[]): void =>
      cidrs.forEach((c, i) => {
        const set = sets[i];
        if (set) metrics.changed(set, { released: set.release(c) });
      });

    async function patchCidrs(name: string, cidrs: string[]): Promise<void> {
      let last: unknown;
      for (let attempt = 0; attempt < PATCH_RETRIES; attempt++) {
        try {
          await nodeApi.patch(name, { spec: { podCIDR: cidrs[0], podCIDRs: cidrs } }, { type: 'strategic' });
          return;
        } catch (e) {
          if (isNotFound(e)) throw e;
          last = e;
        }
      }
      throw last;
    }

    const controller = newController(ctx, {
      name: NAME,
      queueName: 'nodeipam',
      workers: WORKERS,
      reconcile: async (name) => {
        const node = nodes.store.get(name);
        if (!node) return;
        if (podCidrsOf(node).length > 0) {
          assigned.delete(name);
          occupy(node);
          return;
        }
        const mine = assigned.get(name);
        if (mine && mine.uid === node.metadata.uid) return; // the cache has not caught up with our patch
        starved.delete(name);
        const allocated: Cidr[] = [];
        for (const set of sets) {
          const c = set.allocateNext();
          if (!c) {
            releaseAll(allocated);
            starved.add(name);
            record(node, 'CIDRNotAvailable');
            throw new Error(
              `failed to allocate cidr from cluster cidr ${formatCidr(set.cluster)}: CIDR allocation failed; there are no remaining CIDRs left to allocate in the accepted range`,
            );
          }
          allocated.push(c);
          metrics.changed(set, { allocated: 1 });
        }
        const cidrs = allocated.map(formatCidr);
        try {
          await patchCidrs(name, cidrs);
        } catch (e) {
          if (isNotFound(e)) {
            releaseAll(allocated);
            return;
          }
          log.error('failed to update node podCIDR after multiple attempts', { node: name, cidrs, error: String(e) });
          record(node, 'CIDRAssignmentFailed');
          // As Kubernetes: after a timeout the write may have happened, so the blocks stay taken.
          if (!isServerTimeout(e)) releaseAll(allocated);
          throw e;
        }
        assigned.set(name, { uid: node.metadata.uid ?? '', cidrs });
        log.info('set node podCIDR', { node: name, cidrs });
      },
    });
    controller.watch(nodes, (n) => {
      const name = n.metadata.name ?? '';
      if (!nodes.store.get(name)) {
        if (started) release(n);
        return [];
      }
      return [name];
    });
    return {
      run: async (signal) => {
        try {
          await nodes.waitForSync({ signal, timeoutMs: Number.MAX_SAFE_INTEGER });
        } catch {
          return;
        }
        // Kubernetes lists the nodes before it allocates: every block a node holds is taken first.
        for (const n of nodes.store.list()) occupy(n);
        started = true;
        log.info('starting range CIDR allocator', {
          clusterCidrs: cfg.clusterCidrs.map(formatCidr),
          nodeMaskSizes: cfg.nodeMaskSizes,
        });
        await controller.run(signal);
      },
    };
  },
};
