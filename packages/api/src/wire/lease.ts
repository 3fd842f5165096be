import type { ApiObject } from '../types.js';

/** coordination/v1 Lease (leader election, node heartbeats). */

export interface LeaseSpec {
  holderIdentity?: string;
  leaseDurationSeconds?: number;
  /** MicroTime: RFC 3339 with microseconds. */
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions?: number;
}

export interface Lease extends ApiObject {
  spec?: LeaseSpec;
}
