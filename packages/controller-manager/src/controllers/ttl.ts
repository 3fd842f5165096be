import { isNotFound, nodeTtlAnnotation, type Node } from '@svc/api';
import { ResourceClient } from '@svc/client';
import { informer, newController, type ControllerDefinition } from '../controller-context.js';
import { R } from '../resources.js';

const NAME = 'ttl-controller';
/** Kubernetes runs the ttl controller with 5 workers and no flag to change it. */
const WORKERS = 5;

/** One step of the table: the TTL while the cluster has between sizeMin and sizeMax nodes. */
export interface TtlBoundary {
  sizeMin: number;
  sizeMax: number;
  ttlSeconds: number;
}

/**
 * Kubernetes' ttlBoundaries (pkg/controller/ttl): the steps overlap, so a cluster moves up a
 * step above its sizeMax and down only below the next step's sizeMin (hysteresis).
 */
export const TTL_BOUNDARIES: readonly TtlBoundary[] = [
  { sizeMin: 0, sizeMax: 100, ttlSeconds: 0 },
  { sizeMin: 90, sizeMax: 500, ttlSeconds: 15 },
  { sizeMin: 450, sizeMax: 1000, ttlSeconds: 30 },
  { sizeMin: 900, sizeMax: 2000, ttlSeconds: 60 },
  { sizeMin: 1800, sizeMax: 2 ** 31 - 1, ttlSeconds: 300 },
];

/** The step for `nodeCount` nodes, starting from the current `step`. */
export function ttlStep(step: number, nodeCount: number): number {
  let s = step;
  while (s < TTL_BOUNDARIES.length - 1 && nodeCount > (TTL_BOUNDARIES[s]?.sizeMax ?? Infinity)) s++;
  while (s > 0 && nodeCount < (TTL_BOUNDARIES[s]?.sizeMin ?? 0)) s--;
  return s;
}

/** The annotation's value when it holds a whole number (as Go's strconv.Atoi reads it). */
function currentTtl(node: Node): number | undefined {
  const v = node.metadata.annotations?.[nodeTtlAnnotation()];
  return v !== undefined && /^[+-]?\d+$/.test(v) ? Number(v) : undefined;
}

/**
 * `ttl-controller` (`ttl`), as Kubernetes v1.32's: keeps the annotation `nodeTtlAnnotation()`
 * on every Node at the TTL (seconds) node agents may cache the Secrets and ConfigMaps they read,
 * chosen from the cluster's size by TTL_BOUNDARIES; a node is patched only when its value
 * differs. Every node add and update is checked (Kubernetes relies on node agents updating their
 * Node); unlike Kubernetes, a change of step also queues every node, so the value follows the
 * cluster's size without waiting for those updates.
 */
export const ttlController: ControllerDefinition = {
  name: NAME,
  build(ctx) {
    const nodes = informer<Node>(ctx, R.nodes());
    const nodeApi = new ResourceClient<Node>(ctx.client, R.nodes());
    const log = ctx.logger.with({ controller: NAME });
    let step = 0;
    const controller = newController(ctx, {
      name: NAME,
      queueName: 'ttlcontroller',
      workers: WORKERS,
      reconcile: async (key) => {
        const node = nodes.store.get(key);
        if (!node) return;
        const desired = TTL_BOUNDARIES[step]?.ttlSeconds ?? 0;
        if (currentTtl(node) === desired) return;
        try {
          await nodeApi.patch(
            key,
            { metadata: { annotations: { [nodeTtlAnnotation()]: String(desired) } } },
            { type: 'strategic' },
          );
        } catch (e) {
          if (isNotFound(e)) return;
          throw e;
        }
        log.v(2).info('changed ttl annotation', { node: key, ttlSeconds: desired });
      },
    });
    /** Recounts the nodes after an add or a delete; a new step requeues them all. */
    const recount = (): void => {
      const next = ttlStep(step, nodes.store.size);
      if (next === step) return;
      step = next;
      log.info('cluster size crossed a ttl boundary', { ttlSeconds: TTL_BOUNDARIES[step]?.ttlSeconds });
      for (const n of nodes.store.list()) controller.enqueue(n.metadata.name ?? '');
    };
    nodes.addEventHandler({ onAdd: recount, onDelete: recount });
    // Adds and updates are checked; a deleted node has nothing to patch.
    controller.watch(nodes, (n) => (nodes.store.get(n.metadata.name ?? '') ? [n.metadata.name ?? ''] : []));
    return controller;
  },
};
