import type { ApiObject } from '../types.js';
import type { ConditionStatus } from './meta.js';

/** certificates/v1 CertificateSigningRequest (`request`, `certificate`: base64 of PEM). */

export interface CertificateSigningRequestSpec {
  request: string;
  signerName: string;
  expirationSeconds?: number;
  usages?: string[];
  username?: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

/** `Approved`, `Denied`, `Failed`. */
export interface CertificateSigningRequestCondition {
  type: string;
  status: ConditionStatus;
  reason?: string;
  message?: string;
  lastUpdateTime?: string;
  lastTransitionTime?: string;
}

export interface CertificateSigningRequestStatus {
  conditions?: CertificateSigningRequestCondition[];
  certificate?: string;
}

export interface CertificateSigningRequest extends ApiObject {
  spec: CertificateSigningRequestSpec;
  status?: CertificateSigningRequestStatus;
}
