import { isNotFound, naming, type ApiObject, type Namespace, type NamespaceCondition } from '@svc/api';
import { ResourceClient, collectionPath, type RestClient } from '@svc/client';
import { responseError } from '@svc/client';
import { informer, newController, type ControllerDefinition } from '../controller-context.js';
import { R } from '../resources.js';
import { deletableNamespacedResources } from '../discovery.js';

/** How often a namespace whose content is still going away is looked at again. */
const CONTENT_RECHECK_MS = 1000;

async function getJson<T>(client: RestClient, path: string): Promise<T> {
  const r = await client.request('GET', path);
  if (r.status !== 200) throw responseError(r.status, r.body);
  return r.json<T>();
}

/** Condition `type`: False with `okReason` when nothing `failed`, else True with `badReason` and `message(failed)`. */
function condition(
  type: string,
  failed: string[],
  { okReason, badReason, message }: { okReason: string; badReason: string; message: (items: string[]) => string },
): NamespaceCondition {
  return failed.length === 0
    ? {
        type,
        status: 'False',
        reason: okReason,
        message: 'All content successfully deleted, may be waiting on finalization',
      }
    : { type, status: 'True', reason: badReason, message: message(failed) };
}

/**
 * `namespace-controller`: a namespace being deleted has every namespaced object in it deleted,
 * its status conditions report what is left, and once nothing is left its `svc` finalizer is
 * removed (through `/finalize`) so the API server removes it.
 */
export const namespaceController: ControllerDefinition = {
  name: 'namespace-controller',
  build(ctx) {
    const namespaces = informer<Namespace>(ctx, R.namespaces());
    const nsApi = new ResourceClient<Namespace>(ctx.client, R.namespaces());
    const finalizer = naming().namespaceFinalizer;
    const controller = newController(ctx, {
      name: 'namespace-controller',
      queueName: 'namespace',
      workers: ctx.options.concurrentSyncs.namespace,
      reconcile: async (name, signal) => {
        let ns: Namespace;
        try {
          ns = await nsApi.get(name, { signal });
        } catch (e) {
          if (isNotFound(e)) return;
          throw e;
        }
        if (!ns.metadata.deletionTimestamp) return;
        const finalizers = ns.spec?.finalizers ?? [];
        if (!finalizers.includes(finalizer)) return;

        const conditions: NamespaceCondition[] = [];
        let resources: Awaited<ReturnType<typeof deletableNamespacedResources>>;
        try {
          resources = await deletableNamespacedResources(ctx.client);
          conditions.push({
            type: 'NamespaceDeletionDiscoveryFailure',
            status: 'False',
            reason: 'ResourcesDiscovered',
            message: 'All resources successfully discovered',
          });
        } catch (e) {
          await setConditions(ns, [
            {
              type: 'NamespaceDeletionDiscoveryFailure',
              status: 'True',
              reason: 'DiscoveryFailed',
              message: `Discovery failed: ${String(e)}`,
            },
          ]);
          throw e;
        }
        conditions.push({
          type: 'NamespaceDeletionGroupVersionParsingFailure',
          status: 'False',
          reason: 'ParsedGroupVersions',
          message: 'All legacy kube types successfully parsed',
        });
        const failures: string[] = [];
        const remaining = new Map<string, number>();
        const remainingFinalizers = new Map<string, number>();
        for (const r of resources) {
          const path = collectionPath(r, name);
          try {
            if (r.deleteCollection) {
              const d = await ctx.client.request('DELETE', path, { signal });
              if (d.status >= 300 && d.status !== 404) throw responseError(d.status, d.body);
            }
            const left = await getJson<{ items?: ApiObject[] }>(ctx.client, path);
            const items = left.items ?? [];
            if (!r.deleteCollection) {
              for (const item of items) {
                if (item.metadata.deletionTimestamp) continue;
                const d = await ctx.client.request(
                  'DELETE',
                  `${path}/${encodeURIComponent(item.metadata.name ?? '')}`,
                  { signal },
                );
                if (d.status >= 300 && d.status !== 404) throw responseError(d.status, d.body);
              }
            }
            const label = r.group ? `${r.resource}.${r.group}` : r.resource;
            if (items.length > 0) remaining.set(label, items.length);
            for (const item of items)
              for (const f of item.metadata.finalizers ?? [])
                remainingFinalizers.set(f, (remainingFinalizers.get(f) ?? 0) + 1);
          } catch (e) {
            failures.push(`${r.resource}: ${String(e)}`);
          }
        }
        conditions.push(
          condition('NamespaceDeletionContentFailure', failures, {
            okReason: 'ContentDeleted',
            badReason: 'ContentDeletionFailed',
            message: (f) => `Failed to delete all resource types, ${f.length} remaining: ${f.join(', ')}`,
          }),
        );
        conditions.push(
          condition('NamespaceContentRemaining', [...remaining.keys()], {
            okReason: 'ContentRemoved',
            badReason: 'SomeResourcesRemain',
            message: () =>
              `Some resources are remaining: ${[...remaining].map(([k, n]) => `${k} has ${n} resource instances`).join(', ')}`,
          }),
        );
        conditions.push(
          condition('NamespaceFinalizersRemaining', [...remainingFinalizers.keys()], {
            okReason: 'ContentHasNoFinalizers',
            badReason: 'SomeFinalizersRemain',
            message: () =>
              `Some content in the namespace has finalizers remaining: ${[...remainingFinalizers].map(([k, n]) => `${k} in ${n} resource instances`).join(', ')}`,
          }),
        );
        ns = await setConditions(ns, conditions);
        if (failures.length > 0) throw new Error(`namespace ${name}: ${failures.join('; ')}`);
        if (remaining.size > 0) return { requeueAfter: CONTENT_RECHECK_MS };
        const spec = { ...ns.spec, finalizers: finalizers.filter((f) => f !== finalizer) };
        try {
          await nsApi.update({ ...ns, spec }, { subresource: 'finalize', signal });
        } catch (e) {
          if (!isNotFound(e)) throw e;
        }
        return undefined;
      },
    });

    /** Writes the conditions (keeping lastTransitionTime of unchanged ones); answers the updated namespace. */
    async function setConditions(ns: Namespace, conditions: NamespaceCondition[]): Promise<Namespace> {
      const status = { ...ns.status };
      const old = status.conditions ?? [];
      const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
      const merged = [...old.filter((c) => !conditions.some((n) => n.type === c.type))];
      let changed = false;
      for (const c of conditions) {
        const before = old.find((o) => o.type === c.type);
        if (before && before.status === c.status && before.reason === c.reason && before.message === c.message) {
          merged.push(before);
          continue;
        }
        changed = true;
        merged.push({
          ...c,
          lastTransitionTime: before && before.status === c.status ? before.lastTransitionTime : now,
        });
      }
      if (!changed) return ns;
      return nsApi.update({ ...ns, status: { ...status, conditions: merged } }, { subresource: 'status' });
    }

    controller.watch(namespaces, (n) => (n.metadata.deletionTimestamp ? [n.metadata.name ?? ''] : []));
    return controller;
  },
};
