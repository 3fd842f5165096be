import 'reflect-metadata';
import { webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';
import { naming, type CertificateSigningRequest, type CertificateSigningRequestCondition } from '@svc/api';

x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[1] & object);

const conditionsOf = (csr: CertificateSigningRequest): CertificateSigningRequestCondition[] =>
  csr.status?.conditions ?? [];

/** Kubernetes' GetCertApprovalCondition: an Approved or Denied condition of any status counts. */
export function approvalOf(csr: CertificateSigningRequest): { approved: boolean; denied: boolean } {
  const types = new Set(conditionsOf(csr).map((c) => c.type));
  return { approved: types.has('Approved'), denied: types.has('Denied') };
}

export const hasTrueCondition = (csr: CertificateSigningRequest, type: string): boolean =>
  conditionsOf(csr).some((c) => c.type === type && c.status === 'True');

/** `csr` with `condition` appended (the stored object is never changed). */
export function withCondition(
  csr: CertificateSigningRequest,
  condition: CertificateSigningRequestCondition,
): CertificateSigningRequest {
  return { ...csr, status: { ...csr.status, conditions: [...conditionsOf(csr), condition] } };
}

/** The fields of a PKCS#10 request the signer rules look at, as Go's `x509.CertificateRequest` has them. */
export interface CertificateRequest {
  csr: x509.Pkcs10CertificateRequest;
  /** The last CN of the subject ('' without one). */
  commonName: string;
  organizations: string[];
  dnsNames: string[];
  ipAddresses: string[];
  emailAddresses: string[];
  uris: string[];
}

const SAN_OID = '2.5.29.17';

/** Parses `spec.request` (base64 of PEM): its first PEM block must be a CERTIFICATE REQUEST (Kubernetes' ParseCSR). */
export function parseCertificateRequest(requestB64: string): CertificateRequest {
  const pem = Buffer.from(requestB64, 'base64').toString('latin1');
  const block = /-----BEGIN ([^\r\n]*?)-----\r?\n([\s\S]*?)-----END \1-----/.exec(pem);
  if (block?.[1] !== 'CERTIFICATE REQUEST') throw new Error('PEM block type must be CERTIFICATE REQUEST');
  const csr = new x509.Pkcs10CertificateRequest(Buffer.from((block[2] ?? '').replace(/\s+/g, ''), 'base64'));
  const san = csr.getExtension(SAN_OID);
  const names = san instanceof x509.SubjectAlternativeNameExtension ? san.names.toJSON() : [];
  const ofType = (t: string): string[] => names.filter((n) => n.type === t).map((n) => n.value);
  return {
    csr,
    commonName: csr.subjectName.getField('CN').at(-1) ?? '',
    organizations: csr.subjectName.getField('O'),
    dnsNames: ofType('dns'),
    ipAddresses: ofType('ip'),
    emailAddresses: ofType('email'),
    uris: ofType('url'),
  };
}

/** Why a request breaks a signer's rules, or undefined when it is fine. */
export type SignerRule = (req: CertificateRequest, usages: readonly string[]) => string | undefined;

const NODE_USER_PREFIX = 'system:node:';
const NODES_GROUP = 'system:nodes';

const sameSet = (usages: readonly string[], wanted: readonly string[]): boolean => {
  const set = new Set(usages);
  return set.size === wanted.length && wanted.every((u) => set.has(u));
};

/** Kubernetes' usage list in its messages: the required set, sorted. */
const usageMismatch = (required: readonly string[]): string =>
  `usages did not match [${[...required].sort().join(' ')}]`;

/** Kubernetes' ValidateKubeletClientCSR: O exactly system:nodes, no SANs, CN system:node:*, digital signature + client auth (+ key encipherment). */
export const nodeClientProblem: SignerRule = (req, usages) => {
  if (req.organizations.length !== 1 || req.organizations[0] !== NODES_GROUP)
    return `subject organization is not ${NODES_GROUP}`;
  if (req.dnsNames.length > 0) return 'DNS subjectAltNames are not allowed';
  if (req.emailAddresses.length > 0) return 'Email subjectAltNames are not allowed';
  if (req.ipAddresses.length > 0) return 'IP subjectAltNames are not allowed';
  if (req.uris.length > 0) return 'URI subjectAltNames are not allowed';
  if (!req.commonName.startsWith(NODE_USER_PREFIX))
    return `subject common name does not begin with ${NODE_USER_PREFIX}`;
  const required = ['digital signature', 'key encipherment', 'client auth'];
  if (!sameSet(usages, required) && !sameSet(usages, ['digital signature', 'client auth']))
    return usageMismatch(required);
  return undefined;
};

/** Kubernetes' ValidateKubeletServingCSR: O exactly system:nodes, DNS/IP SANs only (one at least), server usages, CN system:node:*. */
export const nodeServingProblem: SignerRule = (req, usages) => {
  if (req.organizations.length !== 1 || req.organizations[0] !== NODES_GROUP)
    return `subject organization is not ${NODES_GROUP}`;
  if (req.dnsNames.length === 0 && req.ipAddresses.length === 0) return 'DNS or IP subjectAltName is required';
  if (req.emailAddresses.length > 0) return 'Email subjectAltNames are not allowed';
  if (req.uris.length > 0) return 'URI subjectAltNames are not allowed';
  const required = ['digital signature', 'key encipherment', 'server auth'];
  if (!sameSet(usages, required) && !sameSet(usages, ['digital signature', 'server auth']))
    return usageMismatch(required);
  if (!req.commonName.startsWith(NODE_USER_PREFIX))
    return `subject common name does not begin with ${NODE_USER_PREFIX}`;
  return undefined;
};

/** Kubernetes' validAPIServerClientUsages: client auth required; digital signature and key encipherment optional; nothing else. */
export const apiserverClientProblem: SignerRule = (_req, usages) => {
  const other = usages.find((u) => u !== 'client auth' && u !== 'digital signature' && u !== 'key encipherment');
  if (other !== undefined) return `invalid usage for client certificate: ${other}`;
  return usages.includes('client auth') ? undefined : 'missing required usage for client certificate: client auth';
};

/** The rules of each built-in signer under the current naming; legacy-unknown signs anything (as Kubernetes, for compatibility). */
export function signerRules(): ReadonlyMap<string, SignerRule> {
  const s = naming().signerNames;
  return new Map<string, SignerRule>([
    [s.apiserverClient, apiserverClientProblem],
    [s.apiserverClientNodeAgent, nodeClientProblem],
    [s.nodeAgentServing, nodeServingProblem],
    [s.legacyUnknown, () => undefined],
  ]);
}
