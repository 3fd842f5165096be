import type { Logger } from '@svc/component-base';
import { legacyEventLine, type AuditRecord } from './event.js';
import type { AuditMetrics } from './metrics.js';

/**
 * Where events go (Kubernetes' audit.Backend). A backend either records each event it takes or
 * reports it lost through `PluginErrors` (counted in `apiserver_audit_error_total`): nothing is
 * dropped silently.
 */
export interface AuditBackend {
  readonly name: string;
  /**
   * Takes events, in order; resolves false when any of them could not be recorded (each already
   * reported). Batching backends take events without waiting for them to be written.
   */
  processEvents(records: readonly AuditRecord[]): Promise<boolean>;
  /** Stops taking events; resolves once every event taken is recorded or reported lost. */
  shutdown(): Promise<void>;
}

/** Reports events a plugin could not record: counted per plugin and logged. */
export type PluginErrors = (plugin: string, err: unknown, impacted: readonly AuditRecord[]) => void;

/** At most this many lost events are written out one by one in the error log entry. */
const LOGGED_EVENTS = 100;

export function pluginErrors(metrics: AuditMetrics, log?: Logger): PluginErrors {
  return (plugin, err, impacted) => {
    if (impacted.length === 0) return;
    metrics.errors.inc({ plugin }, impacted.length);
    const lines = impacted.slice(0, LOGGED_EVENTS).map((r) => legacyEventLine(r.fields));
    if (impacted.length > LOGGED_EVENTS) lines.push(`... and ${impacted.length - LOGGED_EVENTS} more`);
    log?.error('audit plugin error', {
      plugin,
      events: impacted.length,
      error: err instanceof Error ? err.message : String(err),
      impacted: lines.join('\n'),
    });
  };
}

/** Every backend gets every event (Kubernetes' union); false when any backend failed. */
export function unionBackend(backends: readonly AuditBackend[]): AuditBackend {
  if (backends.length === 1 && backends[0]) return backends[0];
  return {
    name: `union[${backends.map((b) => b.name).join(',')}]`,
    async processEvents(records) {
      const results = await Promise.all(backends.map((b) => b.processEvents(records)));
      return results.every(Boolean);
    },
    async shutdown() {
      await Promise.all(backends.map((b) => b.shutdown()));
    },
  };
}

/** Blocking mode: waits for the delegate but never fails the request (its errors are already reported). */
export function ignoreErrors(delegate: AuditBackend): AuditBackend {
  return {
    name: `ignoreErrors<${delegate.name}>`,
    async processEvents(records) {
      await delegate.processEvents(records);
      return true;
    },
    shutdown: () => delegate.shutdown(),
  };
}
