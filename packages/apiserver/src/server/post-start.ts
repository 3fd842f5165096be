import { group, isAlreadyExists, isNotFound, naming, systemNamespaces, type Catalog } from '@svc/api';
import { PostStartHook, type Logger } from '@svc/component-base';
import type { ApiServerOptions } from '../options.js';
import type { Authorization } from '../authz/rbac/setup.js';
import { AUTHENTICATION_INFO_CONFIGMAP, authenticationInfoData } from './authentication-info.js';
import { ServiceRangeRepair } from '../registry/service-repair.js';
import { retryUntil } from './retry.js';
import type { Stores } from './stores.js';
import type { CrdController } from '../apiextensions/crd-controller.js';
import { SYSTEM_PRIORITY_CLASSES } from '../registry/strategies/priority-class.js';

export interface PostStartDeps {
  opts: ApiServerOptions;
  catalog: Catalog;
  stores: Stores;
  authorization: Authorization;
  log: Logger;
  /** The apiextensions controllers (CRDs), run as hooks of their own. */
  crds: CrdController;
  /** Ends the retries (the server stops). */
  signal: AbortSignal;
}

export interface PostStart {
  /** Each hook is a livez/readyz/healthz check (`poststarthook/<name>`) until it is done. */
  hooks: PostStartHook[];
  /** Runs the hooks once the server listens; settles when every one is done (or the server stopped first). */
  run(): Promise<void>;
}

/**
 * Kubernetes' post-start hooks, each retried until the store answers: the system namespaces
 * (`bootstrap-controller`), RBAC's caches and default policy (`rbac/bootstrap-roles`), and —
 * once the namespaces exist — the client-CA and request-header settings for delegating
 * components (`start-cluster-authentication-info-controller`).
 */
export function postStartHooks(d: PostStartDeps): PostStart {
  const admission = new PostStartHook('start-apiserver-admission-initializer');
  admission.done(); // the plugins are built (and their configuration read) before the server listens
  const informers = new PostStartHook('generic-apiserver-start-informers');
  informers.done();
  const crdInformers = new PostStartHook('start-apiextensions-informers');
  const crdControllers = new PostStartHook('start-apiextensions-controllers');
  const crdSynced = new PostStartHook('crd-informer-synced');
  const namespaces = new PostStartHook('bootstrap-controller');
  const rbac = new PostStartHook('rbac/bootstrap-roles');
  const authInfo = new PostStartHook('start-cluster-authentication-info-controller');
  const priorityClasses = new PostStartHook('scheduling/bootstrap-system-priority-classes');
  let running: Promise<void> | undefined;
  const run = (): Promise<void> => {
    running ??= (async () => {
      const crds = runCrdController(d, { informers: crdInformers, controllers: crdControllers, synced: crdSynced });
      // As Kubernetes' bootstrap controller: the Service ranges are repaired once (before the
      // `svc` Service is made, which waits for every hook), then every 3 minutes. The system
      // namespaces do not wait for the repair: the hook is done when both are.
      const repair = serviceRangeRepair(d);
      const repaired = repair && retryFor(d, namespaces, () => repair.runOnce().then(() => undefined));
      void repaired?.then(() => repair?.run(d.signal));
      const namespacesCreated = retryFor(d, namespaces, () => createSystemNamespaces(d));
      const namespacesDone = Promise.all([repaired, namespacesCreated]).then(() => namespaces.done());
      const rbacDone = retry(d, rbac, () => d.authorization.bootstrap(d.signal));
      const authInfoDone = namespacesCreated.then(() => retry(d, authInfo, () => publishAuthenticationInfo(d)));
      const priorityClassesDone = retry(d, priorityClasses, () => createSystemPriorityClasses(d));
      await Promise.all([crds, namespacesDone, rbacDone, authInfoDone, priorityClassesDone]);
    })();
    return running;
  };
  return {
    hooks: [admission, informers, crdInformers, crdControllers, crdSynced, namespaces, rbac, authInfo, priorityClasses],
    run,
  };
}

/**
 * Starts the CRD informer and controllers (they run until the server stops); settles once
 * every existing CRD is served (`crd-informer-synced`), so readyz is 200 only then.
 */
async function runCrdController(
  d: PostStartDeps,
  hooks: { informers: PostStartHook; controllers: PostStartHook; synced: PostStartHook },
): Promise<void> {
  d.crds.run(d.signal).catch((e: unknown) => d.log.warn('CRD controller ended', { error: (e as Error).message }));
  hooks.controllers.done();
  await Promise.race([d.crds.informerSynced, aborted(d.signal)]);
  hooks.informers.done();
  await Promise.race([d.crds.synced, aborted(d.signal)]);
  hooks.synced.done();
}

function aborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener('abort', () => resolve(), { once: true });
  });
}

/** Runs one hook's work until it succeeds (or the server stops), then marks the hook done. */
async function retry(d: PostStartDeps, hook: PostStartHook, attempt: () => Promise<void>): Promise<void> {
  await retryFor(d, hook, attempt);
  hook.done();
}

/** Runs part of a hook's work until it succeeds (or the server stops), logging each failure under the hook's name. */
function retryFor(d: PostStartDeps, hook: PostStartHook, attempt: () => Promise<void>): Promise<void> {
  return retryUntil(d.signal, attempt, (e, n) =>
    d.log.warn(`${hook.name} failed; retrying`, { error: (e as Error).message, attempt: n }),
  );
}

function serviceRangeRepair(d: PostStartDeps): ServiceRangeRepair | undefined {
  const allocation = d.stores.serviceAllocation;
  const type = d.catalog.lookup('', 'v1', 'services');
  if (!allocation || !type) return undefined;
  return new ServiceRangeRepair({
    allocation,
    listServices: async () => (await d.stores.storeFor(type).list('')).items,
    log: d.log,
  });
}

/** Creates the system namespaces that do not exist, all at once. */
async function createSystemNamespaces(d: PostStartDeps): Promise<void> {
  const type = d.catalog.lookup('', 'v1', 'namespaces');
  if (!type) return;
  const store = d.stores.storeFor(type);
  await Promise.all(
    systemNamespaces().map(async (name) => {
      try {
        await store.create('', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } }, { ctx: {} });
      } catch (e) {
        if (!isAlreadyExists(e)) throw e;
      }
    }),
  );
}

/** Kubernetes' `scheduling/bootstrap-system-priority-classes`: the two system classes, created when missing (never changed). */
async function createSystemPriorityClasses(d: PostStartDeps): Promise<void> {
  const type = d.catalog.lookup(group('scheduling'), 'v1', 'priorityclasses');
  if (!type) return;
  const store = d.stores.storeFor(type);
  for (const pc of SYSTEM_PRIORITY_CLASSES) {
    try {
      await store.get('', pc.name);
      continue;
    } catch (e) {
      if (!isNotFound(e)) throw e;
    }
    const obj = {
      apiVersion: `${group('scheduling')}/v1`,
      kind: 'PriorityClass',
      metadata: { name: pc.name },
      value: pc.value,
      description: pc.description,
    };
    try {
      await store.create('', obj, { ctx: {} });
      d.log.info('created PriorityClass', { name: pc.name, value: pc.value });
    } catch (e) {
      if (!isAlreadyExists(e)) throw e;
    }
  }
}

async function publishAuthenticationInfo(d: PostStartDeps): Promise<void> {
  const type = d.catalog.lookup('', 'v1', 'configmaps');
  if (!type) return;
  const configMaps = d.stores.storeFor(type);
  const data = authenticationInfoData(d.opts);
  const namespace = naming().systemNamespace;
  try {
    await configMaps.update(namespace, AUTHENTICATION_INFO_CONFIGMAP, {
      updater: (current) => ({ ...current, data }),
      ctx: {},
    });
  } catch (e) {
    if (!isNotFound(e)) throw e;
    const metadata = { name: AUTHENTICATION_INFO_CONFIGMAP, namespace };
    await configMaps.create(namespace, { apiVersion: 'v1', kind: 'ConfigMap', metadata, data }, { ctx: {} });
  }
}
