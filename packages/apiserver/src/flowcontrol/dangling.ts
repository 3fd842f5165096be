import type { FlowControlCondition, FlowSchema } from '@svc/api';
import { isNotFound } from '@svc/api';
import type { Logger } from '@svc/component-base';
import type { GenericStore } from '../registry/store.js';

/** What a pass looks at: the schemas as the informer has them and whether a level exists. */
export interface DanglingSnapshot {
  schemas: readonly FlowSchema[];
  levelExists(name: string): boolean;
}

/** The Dangling condition a schema should carry. */
function wantedCondition(fs: FlowSchema, levelExists: (name: string) => boolean): FlowControlCondition {
  const plName = fs.spec.priorityLevelConfiguration?.name ?? '';
  const named = `This FlowSchema references the PriorityLevelConfiguration object named ${JSON.stringify(plName)}`;
  return levelExists(plName)
    ? { type: 'Dangling', status: 'False', reason: 'Found', message: `${named} and it exists` }
    : { type: 'Dangling', status: 'True', reason: 'NotFound', message: `${named} but there is no such object` };
}

function carries(fs: FlowSchema, wanted: FlowControlCondition): boolean {
  const current = fs.status?.conditions?.find((c) => c.type === 'Dangling');
  return (
    !!current &&
    current.status === wanted.status &&
    current.reason === wanted.reason &&
    current.message === wanted.message
  );
}

/**
 * Each FlowSchema's `Dangling` condition (Kubernetes' APF configuration controller). One pass
 * runs at a time; changes seen while it runs fold into one more pass, so a burst of informer
 * events (the bootstrap objects arriving one by one) costs a few passes, not one per event.
 * A schema whose stored condition is already right is left alone (no write, no new
 * lastTransitionTime).
 */
export class DanglingConditions {
  private running = false;
  private again = false;

  constructor(private readonly o: { store: () => GenericStore; snapshot: () => DanglingSnapshot; log: Logger }) {}

  /** Asks for a pass over the current configuration. */
  request(): void {
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = true;
    void (async () => {
      try {
        do {
          this.again = false;
          await this.pass();
        } while (this.again);
      } finally {
        this.running = false;
      }
    })();
  }

  private async pass(): Promise<void> {
    const { schemas, levelExists } = this.o.snapshot();
    for (const fs of schemas) {
      const wanted = wantedCondition(fs, levelExists);
      if (carries(fs, wanted)) continue;
      try {
        await this.o.store().update('', fs.metadata.name ?? '', {
          ctx: {},
          subresource: 'status',
          updater: (obj) => {
            const o = obj as FlowSchema;
            if (carries(o, wanted)) return o; // the informer was behind; nothing to write
            const others = (o.status?.conditions ?? []).filter((c) => c.type !== 'Dangling');
            const condition = { ...wanted, lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z') };
            return { ...o, status: { ...o.status, conditions: [...others, condition] } };
          },
        });
      } catch (e) {
        if (!isNotFound(e))
          this.o.log.warn('FlowSchema status not updated', { name: fs.metadata.name, error: (e as Error).message });
      }
    }
  }
}
