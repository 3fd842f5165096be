import { isAlreadyExists, isNotFound, naming, systemNamespaces, type Catalog } from '@svc/api';
import { PostStartHook, type Logger } from '@svc/component-base';
import type { ApiServerOptions } from '../options.js';
import type { Authorization } from '../authz/rbac/setup.js';
import { AUTHENTICATION_INFO_CONFIGMAP, authenticationInfoData } from './authentication-info.js';
import { retryUntil } from './retry.js';
import type { Stores } from './stores.js';

export interface PostStartDeps {
  opts: ApiServerOptions;
  catalog: Catalog;
  stores: Stores;
  authorization: Authorization;
  log: Logger;
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
  const informers = new PostStartHook('generic-apiserver-start-informers');
  informers.done();
  const namespaces = new PostStartHook('bootstrap-controller');
  const rbac = new PostStartHook('rbac/bootstrap-roles');
  const authInfo = new PostStartHook('start-cluster-authentication-info-controller');
  let running: Promise<void> | undefined;
  const run = (): Promise<void> => {
    running ??= (async () => {
      const namespacesDone = retry(d, namespaces, () => createSystemNamespaces(d));
      const rbacDone = retry(d, rbac, () => d.authorization.bootstrap(d.signal));
      const authInfoDone = namespacesDone.then(() => retry(d, authInfo, () => publishAuthenticationInfo(d)));
      await Promise.all([namespacesDone, rbacDone, authInfoDone]);
    })();
    return running;
  };
  return { hooks: [informers, namespaces, rbac, authInfo], run };
}

/** Runs one hook's work until it succeeds (or the server stops), then marks the hook done. */
async function retry(d: PostStartDeps, hook: PostStartHook, attempt: () => Promise<void>): Promise<void> {
  await retryUntil(d.signal, attempt, (e, n) =>
    d.log.warn(`${hook.name} failed; retrying`, { error: (e as Error).message, attempt: n }),
  );
  hook.done();
}

async function createSystemNamespaces(d: PostStartDeps): Promise<void> {
  const type = d.catalog.lookup('', 'v1', 'namespaces');
  if (!type) return;
  for (const name of systemNamespaces()) {
    try {
      const namespace = { apiVersion: 'v1', kind: 'Namespace', metadata: { name } };
      await d.stores.storeFor(type).create('', namespace, { ctx: {} });
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
