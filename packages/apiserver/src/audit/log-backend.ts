import type { AuditBackend, PluginErrors } from './backend.js';
import { legacyEventLine, type AuditRecord } from './event.js';
import type { LineWriter } from './log-file.js';

export type AuditLogFormat = 'json' | 'legacy';

export const AUDIT_LOG_FORMATS: readonly AuditLogFormat[] = ['legacy', 'json'];

/**
 * Kubernetes' log backend: one line per event, `json` (the event as its JSON serializer writes
 * it) or `legacy` (its one-line text); a line that cannot be written is reported lost (plugin `log`).
 */
export class LogBackend implements AuditBackend {
  readonly name = 'log';

  constructor(
    private readonly out: LineWriter,
    private readonly o: { format: AuditLogFormat; apiVersion: string; errors: PluginErrors },
  ) {}

  processEvents(records: readonly AuditRecord[]): Promise<boolean> {
    let ok = true;
    for (const r of records) {
      const line = this.o.format === 'legacy' ? legacyEventLine(r.fields) : r.json(this.o.apiVersion);
      try {
        this.out.write(`${line}\n`);
      } catch (e) {
        this.o.errors(this.name, e, [r]);
        ok = false;
      }
    }
    return Promise.resolve(ok);
  }

  shutdown(): Promise<void> {
    return this.out.close();
  }
}
