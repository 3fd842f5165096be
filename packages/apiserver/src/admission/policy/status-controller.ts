import { isConflict, isNotFound, type Catalog, type ValidatingAdmissionPolicy } from '@svc/api';
import type { Logger } from '@svc/component-base';
import type { StoreInformer } from '../../authz/rbac/informer.js';
import type { GenericStore } from '../../registry/store.js';
import { typeCheck } from './type-check.js';

/** The field manager of the controller's status writes (Kubernetes' controller name). */
export const STATUS_CONTROLLER_NAME = 'validatingadmissionpolicy-status-controller';

export interface PolicyStatusDeps {
  policies: StoreInformer;
  catalog: Catalog;
  /** The ValidatingAdmissionPolicy store. */
  store(): GenericStore;
  log: Logger;
  signal: AbortSignal;
}

const RETRY_MS = 1000;

/**
 * Kubernetes' validatingadmissionpolicy-status controller, run inside the API server (the
 * type checker needs the server's CEL engine and schemas, which the controller manager does
 * not have): every policy whose generation is newer than its `status.observedGeneration` is
 * type-checked against the kinds it matches, and its status gets `observedGeneration` and
 * `typeChecking.expressionWarnings`. Level-based: each change runs one pass over all
 * policies; a failed write is retried a second later. Servers running it side by side
 * write the same status (a write that changes nothing is not made).
 */
export class PolicyStatusController {
  private running = false;
  private again = false;
  private retry?: NodeJS.Timeout;

  constructor(private readonly d: PolicyStatusDeps) {
    d.policies.onChange(() => this.schedule());
    d.signal.addEventListener('abort', () => clearTimeout(this.retry), { once: true });
  }

  private schedule(): void {
    if (this.d.signal.aborted) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = true;
    this.passes()
      .catch((e: unknown) => this.d.log.warn('policy status pass failed', { error: String(e) }))
      .finally(() => (this.running = false));
  }

  private async passes(): Promise<void> {
    do {
      this.again = false;
      let failed = false;
      for (const o of [...this.d.policies.list()]) {
        const p = o as ValidatingAdmissionPolicy;
        if ((p.metadata.generation ?? 0) <= (p.status?.observedGeneration ?? 0)) continue;
        try {
          await this.sync(p.metadata.name ?? '');
        } catch (e) {
          failed = true;
          this.d.log.warn('policy status update failed; retrying', { policy: p.metadata.name, error: String(e) });
        }
      }
      if (failed && !this.d.signal.aborted) {
        clearTimeout(this.retry);
        this.retry = setTimeout(() => this.schedule(), RETRY_MS);
      }
    } while (this.again && !this.d.signal.aborted);
  }

  private async sync(name: string): Promise<void> {
    try {
      await this.d.store().update('', name, {
        subresource: 'status',
        ctx: { fieldManager: STATUS_CONTROLLER_NAME },
        updater: (current) => {
          const p = current as ValidatingAdmissionPolicy;
          const generation = p.metadata.generation ?? 0;
          if (generation <= (p.status?.observedGeneration ?? 0)) return current;
          const expressionWarnings = typeCheck(p, this.d.catalog);
          p.status = {
            ...p.status,
            observedGeneration: generation,
            typeChecking: expressionWarnings.length > 0 ? { expressionWarnings } : {},
          };
          return p;
        },
      });
    } catch (e) {
      // A policy deleted meanwhile needs nothing; a conflict is retried by the next pass.
      if (isNotFound(e)) return;
      if (isConflict(e)) this.again = true;
      else throw e;
    }
  }
}
