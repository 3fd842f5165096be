import { Counter, type Registry } from 'prom-client';
import type { AuditLevel } from '@svc/api';

/** Kubernetes' audit metrics, in the server's registry. */
export class AuditMetrics {
  readonly events: Counter;
  readonly errors: Counter<'plugin'>;
  readonly levels: Counter<'level'>;
  readonly rejected: Counter;

  constructor(registry: Registry) {
    const registers = [registry];
    this.events = new Counter({
      name: 'apiserver_audit_event_total',
      help: 'Audit events made and handed to the audit backends.',
      registers,
    });
    this.errors = new Counter({
      name: 'apiserver_audit_error_total',
      help: 'Audit events that could not be recorded, by the plugin (backend stage) that lost them.',
      labelNames: ['plugin'] as const,
      registers,
    });
    this.levels = new Counter({
      name: 'apiserver_audit_level_total',
      help: 'Requests by the audit level the policy gave them (one per request).',
      labelNames: ['level'] as const,
      registers,
    });
    this.rejected = new Counter({
      name: 'apiserver_audit_requests_rejected_total',
      help: 'Requests refused because an audit backend could not record their first event.',
      registers,
    });
  }

  observeLevel(level: AuditLevel): void {
    this.levels.inc({ level });
  }
}
