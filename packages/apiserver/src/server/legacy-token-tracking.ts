import { isAlreadyExists, isNotFound, legacyTokenTrackingConfigMap, naming, type ConfigMap } from '@svc/api';
import { sleep } from '@svc/machinery';
import { utcDate } from '../authn/service-account/legacy-token-authenticator.js';
import { retryUntil } from './retry.js';
import type { Startup } from './startup.js';
import type { Stores } from './stores.js';

/** How often the tracking ConfigMap is checked again after start (Kubernetes recreates it at most every 30 minutes). */
const RECHECK_MS = 30 * 60_000;

const DATE = /^\d{4}-\d{2}-\d{2}$/;

const writeCtx = (): { fieldManager: string } => ({ fieldManager: naming().apiserverName });

/**
 * Sets the last-used label of a legacy token Secret through the server's own store, as
 * Kubernetes' legacy validator patches it with the loopback client: only the Secret of this
 * uid is changed, and a failure is logged, never the request's concern.
 */
export async function labelLegacyTokenSecret(
  s: Startup,
  stores: Stores,
  l: { namespace: string; name: string; uid: string; key: string; value: string },
): Promise<void> {
  const type = s.catalog.lookup('', 'v1', 'secrets');
  if (!type) return;
  try {
    await stores.storeFor(type).update(l.namespace, l.name, {
      ctx: writeCtx(),
      updater: (cur) => {
        if (cur.metadata.uid !== l.uid)
          throw new Error(`UID in precondition: ${l.uid}, UID in object meta: ${cur.metadata.uid ?? ''}`);
        return { ...cur, metadata: { ...cur.metadata, labels: { ...cur.metadata.labels, [l.key]: l.value } } };
      },
    });
  } catch (e) {
    s.log.warn('failed to label legacy service account token with last-used date', {
      secret: `${l.namespace}/${l.name}`,
      error: (e as Error).message,
    });
  }
}

/**
 * Kubernetes' legacy-token-tracking controller: the system namespace's tracking ConfigMap
 * (`legacyTokenTrackingConfigMap()`) holds in `since` the UTC date from which legacy tokens'
 * uses are labelled; it is created with today's date when missing and given today's date when
 * its value is not a date (an existing date is never moved). Checked at start, until it
 * succeeds, then every 30 minutes until `signal`.
 */
export async function runLegacyTokenTracking(s: Startup, stores: Stores, signal: AbortSignal): Promise<void> {
  while (!signal.aborted) {
    await retryUntil(
      signal,
      () => ensureTrackingConfigMap(s, stores),
      (e, n) => {
        if (n > 0) s.log.warn('legacy token tracking ConfigMap not written; retrying', { error: (e as Error).message });
      },
    );
    await sleep(RECHECK_MS, signal);
  }
}

async function ensureTrackingConfigMap(s: Startup, stores: Stores): Promise<void> {
  const type = s.catalog.lookup('', 'v1', 'configmaps');
  if (!type) return;
  const store = stores.storeFor(type);
  const { name, dataKey } = legacyTokenTrackingConfigMap();
  const ns = naming().systemNamespace;
  const today = utcDate(Date.now());
  let current: ConfigMap | undefined;
  try {
    current = (await store.get(ns, name)) as ConfigMap;
  } catch (e) {
    if (!isNotFound(e)) throw e;
  }
  if (!current) {
    const cm: ConfigMap = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { namespace: ns, name },
      data: { [dataKey]: today },
    };
    try {
      await store.create(ns, cm, { ctx: writeCtx() });
    } catch (e) {
      if (!isAlreadyExists(e)) throw e;
    }
    return;
  }
  if (validDate(current.data?.[dataKey])) return;
  try {
    await store.update(ns, name, {
      ctx: writeCtx(),
      updater: (cur) => {
        const cm = cur as ConfigMap;
        if (validDate(cm.data?.[dataKey])) return cm;
        return { ...cm, data: { ...cm.data, [dataKey]: today } };
      },
    });
  } catch (e) {
    if (!isNotFound(e)) throw e;
  }
}

function validDate(v: string | undefined): boolean {
  return v !== undefined && DATE.test(v) && !Number.isNaN(Date.parse(`${v}T00:00:00Z`));
}
