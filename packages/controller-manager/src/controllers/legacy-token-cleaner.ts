import {
  isConflict,
  isNotFound,
  legacyTokenTrackingConfigMap,
  naming,
  serviceAccountTokenSecretKey,
  type ConfigMap,
  type Pod,
  type Secret,
  type ServiceAccount,
} from '@svc/api';
import { ResourceClient } from '@svc/client';
import { informer, type ControllerDefinition } from '../controller-context.js';
import { R } from '../resources.js';
import { REAL_CLOCK, type Clock } from './clock.js';
import { podSecretNames } from './pod-secret-names.js';

const NAME = 'legacy-serviceaccount-token-cleaner-controller';
const DAY_MS = 86_400_000;
/** Kubernetes' DefaultCleanerSyncInterval: one pass a day. */
const SYNC_INTERVAL_MS = DAY_MS;
const DATE = /^\d{4}-\d{2}-\d{2}$/;

/** `YYYY-MM-DD` of `ms` in UTC (the labels' date format). */
function utcDate(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

function isDate(v: string | undefined): v is string {
  return v !== undefined && DATE.test(v) && !Number.isNaN(Date.parse(`${v}T00:00:00Z`));
}

export interface LegacyTokenCleanerOptions {
  /** The time passes are made at; a jump of a test's clock starts a pass at once. */
  clock?: Clock;
  /** Called after each pass that read the tracking ConfigMap, with the clock time the pass began at (tests wait for it). */
  onPass?: (startedAt: number) => void;
}

/**
 * `legacy-serviceaccount-token-cleaner-controller` (`legacy-service-account-token-cleaner`),
 * Kubernetes' LegacySATokenCleaner. Once a day (and at start), when the API servers have
 * tracked legacy token use for at least `--legacy-service-account-token-clean-up-period` (the
 * day after the tracking ConfigMap's `since` date, plus the period), each token Secret that
 *
 * - was created more than the period ago and is not being deleted,
 * - has no legacy-token-last-used label, or one dated before the day the period began (a label
 *   that is not a date keeps the Secret),
 * - belongs to an existing account (of the uid annotation's uid, if any) that lists it in its
 *   `secrets` (an auto-generated token; others are never touched),
 * - and no pod of its namespace refers to,
 *
 * is labelled legacy-token-invalid-since with today's date (the API server then refuses it), and
 * once that date is before the day the period began, deleted (with its resourceVersion as
 * precondition). The label is written with the cached resourceVersion too, so a use the cache
 * has not seen yet does not get the Secret marked (Kubernetes writes it with the uid only).
 */
export function makeLegacyTokenCleaner(o: LegacyTokenCleanerOptions = {}): ControllerDefinition {
  const clock = o.clock ?? REAL_CLOCK;
  return {
    name: NAME,
    build(ctx) {
      const periodMs = ctx.options.legacyServiceAccountTokenCleanUpPeriodMs;
      const log = ctx.logger.with({ controller: NAME });
      const accounts = informer<ServiceAccount>(ctx, R.serviceAccounts());
      const secrets = informer<Secret>(ctx, R.secrets());
      const pods = informer<Pod>(ctx, R.pods());
      const secretApi = (ns: string): ResourceClient<Secret> =>
        new ResourceClient<Secret>(ctx.client, R.secrets()).namespace(ns);
      const configMaps = new ResourceClient<ConfigMap>(ctx.client, R.configMaps()).namespace(naming().systemNamespace);
      const tokenType = serviceAccountTokenSecretKey('type');
      const lastUsedKey = serviceAccountTokenSecretKey('legacy-token-last-used');
      const invalidSinceKey = serviceAccountTokenSecretKey('legacy-token-invalid-since');

      /** 00:00 UTC of the day after the tracking ConfigMap's `since` (the first whole tracked day). */
      const trackedSince = async (): Promise<number> => {
        const { name, dataKey } = legacyTokenTrackingConfigMap();
        const cm = await configMaps.get(name);
        const since = cm.data?.[dataKey];
        if (since === undefined) throw new Error('configMap does not have since label');
        if (!isDate(since)) throw new Error(`error parsing trackedSince time: ${JSON.stringify(since)}`);
        return Date.parse(`${since}T00:00:00Z`) + DAY_MS;
      };

      const accountOf = (secret: Secret): ServiceAccount | undefined => {
        const ann = secret.metadata.annotations ?? {};
        const name = ann[serviceAccountTokenSecretKey('service-account.name')];
        if (!name) return undefined;
        const sa = accounts.store.get(`${secret.metadata.namespace ?? ''}/${name}`);
        const uid = ann[serviceAccountTokenSecretKey('service-account.uid')];
        return sa && (!uid || uid === sa.metadata.uid) ? sa : undefined;
      };

      /** One pass at `now`; false when the tracking ConfigMap could not be read. */
      const pass = async (now: number): Promise<boolean> => {
        let since: number;
        try {
          since = await trackedSince();
        } catch (e) {
          log.error('getting latest possible tracked_since time', { error: (e as Error).message });
          return false;
        }
        if (now < since + periodMs) return true; // not tracked long enough
        const createdBefore = now - periodMs;
        const usedOnOrAfter = utcDate(now - periodMs);
        const mounted = new Map<string, Set<string>>();
        const mountedIn = (ns: string): Set<string> => {
          let names = mounted.get(ns);
          if (!names) {
            names = new Set();
            for (const p of pods.store.list()) {
              if (p.metadata.namespace === ns) for (const n of podSecretNames(p)) names.add(n);
            }
            mounted.set(ns, names);
          }
          return names;
        };
        for (const secret of secrets.store.list()) {
          const { namespace = '', name = '' } = secret.metadata;
          if (secret.type !== tokenType || secret.metadata.deletionTimestamp) continue;
          if (!(Date.parse(secret.metadata.creationTimestamp ?? '') < createdBefore)) continue;
          const lastUsed = secret.metadata.labels?.[lastUsedKey];
          if (lastUsed !== undefined) {
            if (!isDate(lastUsed)) {
              log.error('parsing lastUsed time', { secret: `${namespace}/${name}`, lastUsed });
              continue;
            }
            if (lastUsed >= usedOnOrAfter) continue;
          }
          const sa = accountOf(secret);
          if (!sa || !(sa.secrets ?? []).some((ref) => ref.name === name)) continue; // not auto-generated
          if (mountedIn(namespace).has(name)) continue; // still used by pods
          const invalidSince = secret.metadata.labels?.[invalidSinceKey];
          try {
            if (!isDate(invalidSince)) {
              const today = utcDate(now);
              log.info('Mark the auto-generated service account token as invalid', {
                invalidSince: today,
                secret: `${namespace}/${name}`,
              });
              await secretApi(namespace).patch(
                name,
                {
                  metadata: {
                    uid: secret.metadata.uid,
                    resourceVersion: secret.metadata.resourceVersion,
                    labels: { [invalidSinceKey]: today },
                  },
                },
                { type: 'merge' },
              );
              continue;
            }
            if (invalidSince >= usedOnOrAfter) continue;
            log.info('Delete auto-generated service account token', {
              secret: `${namespace}/${name}`,
              lastUsed,
              invalidSince,
            });
            await secretApi(namespace).delete(name, {
              preconditions: { uid: secret.metadata.uid, resourceVersion: secret.metadata.resourceVersion },
            });
          } catch (e) {
            if (!isConflict(e) && !isNotFound(e))
              log.error('writing legacy service account token', {
                secret: `${namespace}/${name}`,
                error: (e as Error).message,
              });
          }
        }
        return true;
      };

      return {
        run: async (signal) => {
          /** A jump of the clock during a pass makes another pass follow at once. */
          const state: { jumped: boolean; wake?: () => void } = { jumped: false };
          clock.onJump?.(() => {
            state.jumped = true;
            state.wake?.();
          });
          try {
            const forever = Number.POSITIVE_INFINITY;
            await Promise.all([accounts, secrets, pods].map((i) => i.waitForSync({ signal, timeoutMs: forever })));
          } catch (e) {
            if (signal.aborted) return;
            throw e;
          }
          log.info('Starting legacy service account token cleaner controller');
          while (!signal.aborted) {
            state.jumped = false;
            const now = clock.now();
            if (await pass(now)) o.onPass?.(now);
            if (signal.aborted || state.jumped) continue;
            await new Promise<void>((resolve) => {
              const timer = setTimeout(done, SYNC_INTERVAL_MS);
              function done(): void {
                clearTimeout(timer);
                signal.removeEventListener('abort', done);
                state.wake = undefined;
                resolve();
              }
              state.wake = done;
              signal.addEventListener('abort', done, { once: true });
            });
          }
          log.info('Shutting down legacy service account token cleaner controller');
        },
      };
    },
  };
}

export const legacyTokenCleaner = makeLegacyTokenCleaner();
