import type { ListMeta, ObjectMeta, StatusDetails, TypeMeta } from '../types.js';

/** Wire types of `audit.<suffix>/v1` (Kubernetes' audit.k8s.io/v1): the policy file and the events backends write. */

/** How much of a request is recorded, in increasing order. */
export type AuditLevel = 'None' | 'Metadata' | 'Request' | 'RequestResponse';

/** When in a request's life an event is made. */
export type AuditStage = 'RequestReceived' | 'ResponseStarted' | 'ResponseComplete' | 'Panic';

/** The user an event names (authentication's UserInfo on the wire). */
export interface AuditUserInfo {
  username?: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

/** What a request was about. */
export interface AuditObjectReference {
  resource?: string;
  namespace?: string;
  name?: string;
  uid?: string;
  apiGroup?: string;
  apiVersion?: string;
  resourceVersion?: string;
  subresource?: string;
}

/** The answer as an event records it: a Status' bounded fields, or just the code. */
export interface AuditResponseStatus {
  metadata: ListMeta;
  status?: 'Success' | 'Failure';
  message?: string;
  reason?: string;
  details?: StatusDetails;
  code?: number;
}

/** One audit event (`kind: Event`), as written to the log and sent to webhooks. */
export interface AuditEvent extends TypeMeta {
  level: AuditLevel;
  auditID: string;
  stage: AuditStage;
  requestURI: string;
  verb: string;
  user: AuditUserInfo;
  impersonatedUser?: AuditUserInfo;
  sourceIPs?: string[];
  userAgent?: string;
  objectRef?: AuditObjectReference;
  responseStatus?: AuditResponseStatus;
  requestObject?: unknown;
  responseObject?: unknown;
  /** MicroTime: RFC 3339 with microseconds, UTC. */
  requestReceivedTimestamp: string;
  stageTimestamp: string;
  annotations?: Record<string, string>;
}

/** A batch of events (`kind: EventList`), as the webhook backend POSTs it. */
export interface AuditEventList extends TypeMeta {
  metadata: ListMeta;
  items: AuditEvent[];
}

export interface AuditGroupResources {
  group?: string;
  /** `pods`, `pods/log` (a subresource), `*` (any), `pods/*` (any subresource), or `*` then `/log` (any resource's log). */
  resources?: string[];
  resourceNames?: string[];
}

/** One rule of a policy; a request matches when every field given matches. */
export interface AuditPolicyRule {
  level: AuditLevel;
  users?: string[];
  userGroups?: string[];
  verbs?: string[];
  resources?: AuditGroupResources[];
  namespaces?: string[];
  /** Paths, `*`, or a prefix ending in `*`. */
  nonResourceURLs?: string[];
  omitStages?: AuditStage[];
  omitManagedFields?: boolean;
}

/** The audit policy (`kind: Policy`): the first rule a request matches decides its level. */
export interface AuditPolicy extends TypeMeta {
  metadata?: ObjectMeta;
  rules: AuditPolicyRule[];
  omitStages?: AuditStage[];
  omitManagedFields?: boolean;
}
