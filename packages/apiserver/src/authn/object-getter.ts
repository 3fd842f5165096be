import type { ApiObject } from '@svc/api';

/** The core/v1 objects authentication reads. */
export type AuthnObjectResource = 'secrets' | 'serviceaccounts' | 'pods' | 'nodes';

export interface ObjectRef {
  resource: AuthnObjectResource;
  /** Empty for nodes. */
  namespace: string;
  name: string;
}

/**
 * Reads an object through the server's own store, as Kubernetes' authenticators read through
 * informer listers: from the watch cache first, from storage when the cache does not have it
 * (it may have just been created). `fresh` skips the cache. Undefined when it does not exist.
 * Returned objects may be shared with the cache: never mutate them.
 */
export type ObjectGetter = (ref: ObjectRef, opts?: { fresh?: boolean }) => Promise<ApiObject | undefined>;
