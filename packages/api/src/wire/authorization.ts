import type { ApiObject } from '../types.js';

/** authorization/v1 SubjectAccessReview: may `user` do this? (create-only: the answer is in `status`). */

export interface ResourceAttributes {
  namespace?: string;
  verb?: string;
  group?: string;
  version?: string;
  resource?: string;
  subresource?: string;
  name?: string;
}

export interface SubjectAccessReviewSpec {
  resourceAttributes?: ResourceAttributes;
  nonResourceAttributes?: { path?: string; verb?: string };
  user?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
  uid?: string;
}

export interface SubjectAccessReview extends ApiObject {
  spec: SubjectAccessReviewSpec;
  status?: { allowed?: boolean; denied?: boolean; reason?: string; evaluationError?: string };
}
