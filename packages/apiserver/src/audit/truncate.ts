import { auditAnnotationKey } from '@svc/api';
import type { AuditBackend, PluginErrors } from './backend.js';
import { AuditRecord } from './event.js';
import { levelAtLeast } from './policy.js';

/** The `--audit-<backend>-truncate-*` settings, in bytes of an event's JSON. */
export interface TruncateConfig {
  maxEventSize: number;
  maxBatchSize: number;
}

/**
 * Kubernetes' truncating backend: an event larger than `maxEventSize` first loses its request
 * and response objects (and is annotated `audit.<suffix>/truncated: "true"`); one still too large
 * is reported lost (plugin `truncate`). Batches are split so that none exceeds `maxBatchSize`.
 */
export class TruncatingBackend implements AuditBackend {
  readonly name: string;

  constructor(
    private readonly delegate: AuditBackend,
    private readonly c: TruncateConfig & { apiVersion: string },
    private readonly errors: PluginErrors,
  ) {
    this.name = `truncate<${delegate.name}>`;
  }

  async processEvents(records: readonly AuditRecord[]): Promise<boolean> {
    const v = this.c.apiVersion;
    let ok = true;
    let batch: AuditRecord[] = [];
    let batchSize = 0;
    const tooLarge: AuditRecord[] = [];
    for (let record of records) {
      let size = record.size(v);
      if (size > this.c.maxEventSize && levelAtLeast(record.fields.level, 'Request')) {
        record = truncated(record);
        size = record.size(v);
      }
      if (size > this.c.maxEventSize) {
        tooLarge.push(record);
        continue;
      }
      if (batch.length > 0 && batchSize + size > this.c.maxBatchSize) {
        ok = (await this.delegate.processEvents(batch)) && ok;
        batch = [];
        batchSize = 0;
      }
      batchSize += size;
      batch.push(record);
    }
    if (batch.length > 0) ok = (await this.delegate.processEvents(batch)) && ok;
    if (tooLarge.length > 0) this.errors('truncate', new Error('event is too large even after truncating'), tooLarge);
    return ok;
  }

  shutdown(): Promise<void> {
    return this.delegate.shutdown();
  }
}

/** The event without its request and response objects, marked as truncated. */
function truncated(r: AuditRecord): AuditRecord {
  const { requestObject: _req, responseObject: _res, ...rest } = r.fields;
  return new AuditRecord({ ...rest, annotations: { ...rest.annotations, [auditAnnotationKey('truncated')]: 'true' } });
}
