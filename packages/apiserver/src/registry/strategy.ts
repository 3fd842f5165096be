import type { ApiObject, DeleteOptions, FieldError } from '@svc/api';
import type { UserInfo } from '@svc/component-base';

/** What the hooks may know of the request besides the objects. */
export interface StrategyContext {
  /** The requesting user (absent for the server's own writes). */
  user?: UserInfo;
  /** '' for the main resource, else the subresource written (`status`, `approval`). */
  subresource: string;
}

/**
 * A type's server-side behaviour: pure hooks the generic store runs in one fixed order
 * (prepareForCreate → validate → admission → storage; prepareForUpdate → validateUpdate →
 * admission → storage). Hooks may mutate the object they are given; never the old one.
 */
export interface Strategy {
  /** Defaulting and resetting fields the client may not set on create. */
  prepareForCreate?(obj: ApiObject, ctx: StrategyContext): void;
  /** Defaulting and resetting fields the client may not change on update. */
  prepareForUpdate?(obj: ApiObject, old: ApiObject, ctx: StrategyContext): void;
  /** May answer asynchronously (checking a signature, say); the store waits for it. */
  validate?(obj: ApiObject, ctx: StrategyContext): FieldError[] | Promise<FieldError[]>;
  /** Runs for writes to the main resource and to every subresource (`ctx.subresource`). */
  validateUpdate?(obj: ApiObject, old: ApiObject, ctx: StrategyContext): FieldError[] | Promise<FieldError[]>;
  /** Fields that writes to the `status` subresource may change besides `status` (rare). */
  prepareForStatusUpdate?(obj: ApiObject, old: ApiObject, ctx: StrategyContext): void;
  /**
   * A write to a type's own subresource other than `status` and `finalize` (a CSR's
   * `approval`): the object to store, built from the request's object and the stored one.
   */
  prepareForSubresourceUpdate?(obj: ApiObject, old: ApiObject, ctx: StrategyContext): ApiObject;
  /**
   * Decides graceful deletion: returns the grace period to apply (> 0 keeps the object
   * with a future deletionTimestamp), or 0 to delete at once.
   */
  gracePeriodSeconds?(obj: ApiObject, options: DeleteOptions): number;
  /**
   * Type-specific deletion: returns the object to write instead of deleting it (for
   * example a namespace turning Terminating), or undefined for the generic behaviour.
   */
  beforeDelete?(obj: ApiObject, options: DeleteOptions, now: string): ApiObject | undefined;
  /**
   * True while the object waits for something besides `metadata.finalizers` before it may go
   * (a namespace's `spec.finalizers`); such an object is not removed after an update.
   */
  pendingFinalization?(obj: ApiObject): boolean;
  /** A write to the `finalize` subresource: the fields it may change (namespaces). */
  prepareForFinalize?(obj: ApiObject, old: ApiObject): ApiObject;
  /** PUT to a missing name creates it. */
  allowCreateOnUpdate?: boolean;
  /** PUT without metadata.resourceVersion is accepted (last write wins). */
  allowUnconditionalUpdate?: boolean;
  /** DELETE answers with the deleted object instead of a Status. */
  returnDeletedObject?: boolean;
}

export const DEFAULT_STRATEGY: Strategy = { allowUnconditionalUpdate: true };
