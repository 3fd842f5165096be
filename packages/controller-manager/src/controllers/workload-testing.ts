// Test helpers (not exported) for the replica-set and deployment controller tests: a namespace
// per test, pods marked Ready as a node agent would, and a pod cache that records every state.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  deploymentAnnotation,
  isNotFound,
  isStatusError,
  type Deployment,
  type Event,
  type Pod,
  type ReplicaSet,
} from '@svc/api';
import { Informer, ResourceClient, listWatcherFor, type RestClient } from '@svc/client';
import { createDefaultServiceAccount, kubectl, uniqueName, waitFor, type KubectlResult } from '@svc/testing';
import { R } from '../resources.js';
import { isPodActive, isPodReady } from './pod-util.js';
import { nowTime } from './workload-util.js';

export const pods = (api: RestClient, ns: string): ResourceClient<Pod> =>
  new ResourceClient<Pod>(api, R.pods()).namespace(ns);
export const replicaSets = (api: RestClient, ns: string): ResourceClient<ReplicaSet> =>
  new ResourceClient<ReplicaSet>(api, R.replicaSets()).namespace(ns);
export const deployments = (api: RestClient, ns: string): ResourceClient<Deployment> =>
  new ResourceClient<Deployment>(api, R.deployments()).namespace(ns);

/** The core/v1 Events in `ns` about the object named `name` of `kind`, as "reason: message", oldest first. */
export async function eventsAbout(
  api: RestClient,
  ns: string,
  { kind, name }: { kind: string; name: string },
): Promise<string[]> {
  const list = await new ResourceClient<Event>(api, R.events())
    .namespace(ns)
    .list({ fieldSelector: `involvedObject.kind=${kind},involvedObject.name=${name}` });
  return list.items
    .sort((a, b) => (a.metadata.creationTimestamp ?? '').localeCompare(b.metadata.creationTimestamp ?? ''))
    .map((e) => `${e.reason ?? ''}: ${e.message ?? ''}`);
}

/** A fresh namespace with its `default` ServiceAccount (no serviceaccount controller runs here; pods need it). */
export async function createNamespace(api: RestClient, prefix: string): Promise<string> {
  const ns = uniqueName(prefix);
  await new ResourceClient(api, R.namespaces()).create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  await createDefaultServiceAccount(api, ns);
  return ns;
}

/** A pod template labelled `labels`, one container. */
export function template(
  labels: Record<string, string>,
  image = 'busybox',
): NonNullable<ReplicaSet['spec']['template']> {
  return { metadata: { labels }, spec: { containers: [{ name: 'c', image }] } };
}

/** Writes the status a node agent would for a running pod, Ready=`ready` (through `/status`). Resolves false when the pod is gone. */
export async function setPodReady(api: RestClient, pod: Pod, ready = true): Promise<boolean> {
  try {
    await pods(api, pod.metadata.namespace ?? '').patch(
      pod.metadata.name ?? '',
      {
        status: {
          phase: 'Running',
          conditions: [{ type: 'Ready', status: ready ? 'True' : 'False', lastTransitionTime: nowTime() }],
        },
      },
      { type: 'merge', subresource: 'status' },
    );
    return true;
  } catch (e) {
    if (isNotFound(e)) return false;
    throw e;
  }
}

export interface PodWatch {
  informer: Informer<Pod>;
  /** Active (not finished, not being deleted) pods now in the cache. */
  active(filter?: (p: Pod) => boolean): Pod[];
  stop(): Promise<void>;
}

/**
 * A pod informer on `ns`. With `kubelet`, every new pod (that `kubelet` accepts, when a
 * function) is marked Running and Ready as soon as it is seen (simulating a node agent). `onChange` runs after every event with the cache as
 * it then is: the sequence of states is the server's (one watch), so invariants checked
 * there held in the server's history.
 */
export async function watchPods(
  api: RestClient,
  ns: string,
  o: { kubelet?: boolean | ((p: Pod) => boolean); onChange?: (w: PodWatch) => void } = {},
): Promise<PodWatch> {
  const informer = new Informer<Pod>(listWatcherFor<Pod>(api, R.pods(), { namespace: ns }));
  const stop = new AbortController();
  const pending = new Set<Promise<unknown>>();
  const w: PodWatch = {
    informer,
    active: (filter = () => true) => informer.store.list().filter((p) => isPodActive(p) && filter(p)),
    stop: async () => {
      stop.abort();
      await run;
      await Promise.allSettled([...pending]);
    },
  };
  const ready = (p: Pod): void => {
    if (!o.kubelet || (typeof o.kubelet === 'function' && !o.kubelet(p)) || isPodReady(p) || !isPodActive(p)) return;
    const done = setPodReady(api, p)
      .catch(() => undefined)
      .finally(() => pending.delete(done));
    pending.add(done);
  };
  informer.addEventHandler({
    onAdd: (p) => {
      ready(p);
      o.onChange?.(w);
    },
    onUpdate: (_old, p) => {
      ready(p);
      o.onChange?.(w);
    },
    onDelete: () => o.onChange?.(w),
  });
  const run = informer.run(stop.signal);
  await informer.waitForSync();
  return w;
}

/** Stock kubectl against `svcconfigPath` with a private HOME (its discovery cache). */
export async function kubectlIn(svcconfigPath: string): Promise<{
  run(args: string[]): Promise<KubectlResult>;
  ok(args: string[]): Promise<KubectlResult>;
  stop(): Promise<void>;
}> {
  const home = await mkdtemp(join(tmpdir(), 'svc-kubectl-home-'));
  const run = (args: string[]): Promise<KubectlResult> => kubectl(svcconfigPath, args, { home, timeoutMs: 60_000 });
  return {
    run,
    ok: async (args) => {
      const r = await run(args);
      if (r.code !== 0)
        throw new Error(`kubectl ${args.join(' ')} exited ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
      return r;
    },
    stop: () => rm(home, { recursive: true, force: true }),
  };
}

const revision = (rs: ReplicaSet): number => Number(rs.metadata.annotations?.[deploymentAnnotation('revision')] ?? 0);

/** A Deployment of `replicas` pods labelled `app: <name>`, image `image` (busybox), with `spec` fields over those. */
export function deploymentOf(
  name: string,
  replicas: number,
  { spec: extra = {}, image = 'busybox' }: { spec?: Partial<Deployment['spec']>; image?: string } = {},
): Deployment {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name },
    spec: { replicas, selector: { matchLabels: { app: name } }, template: template({ app: name }, image), ...extra },
  };
}

/** ReplicaSets in `ns` controlled by the Deployment `d`, lowest revision first. */
export async function replicaSetsOf(api: RestClient, ns: string, d: Deployment): Promise<ReplicaSet[]> {
  const list = await replicaSets(api, ns).list();
  return list.items
    .filter((rs) => rs.metadata.ownerReferences?.some((r) => r.controller && r.uid === d.metadata.uid))
    .sort((a, b) => revision(a) - revision(b));
}

/**
 * Waits until the Deployment (at `generation` or later) is rolled out as `kubectl rollout status`
 * judges it, with every replica updated and available.
 */
export async function waitForRollout(
  api: RestClient,
  ns: string,
  { name, ...o }: { name: string; generation?: number; timeoutMs?: number },
): Promise<Deployment> {
  return waitFor(
    `deployment ${name} to be rolled out`,
    async () => {
      const d = await deployments(api, ns).get(name);
      if ((d.metadata.generation ?? 0) < (o.generation ?? 0)) return undefined;
      const st = d.status ?? {};
      const n = d.spec.replicas ?? 1;
      const done =
        (st.observedGeneration ?? 0) >= (d.metadata.generation ?? 0) &&
        (st.updatedReplicas ?? 0) === n &&
        (st.replicas ?? 0) === n &&
        (st.availableReplicas ?? 0) === n;
      return done ? d : undefined;
    },
    { timeoutMs: o.timeoutMs ?? 20_000 },
  );
}

/** The code and causes of a refused write, as `field: reason` (`field: reason: message` with `messages`); throws when it was accepted. */
export async function refusal(
  write: Promise<unknown>,
  { messages = false }: { messages?: boolean } = {},
): Promise<{ code: number; causes: string[] }> {
  try {
    await write;
  } catch (e) {
    if (!isStatusError(e)) throw e;
    return {
      code: e.status.code ?? 0,
      causes: (e.status.details?.causes ?? []).map(
        (c) => `${c.field ?? ''}: ${c.reason ?? ''}${messages ? `: ${c.message ?? ''}` : ''}`,
      ),
    };
  }
  throw new Error('the write was accepted');
}
