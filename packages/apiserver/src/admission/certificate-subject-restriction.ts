import 'reflect-metadata';
import * as x509 from '@peculiar/x509';
import { group, naming } from '@svc/api';
import { pemBlocks } from '../registry/strategies/pem.js';
import type { AdmissionAttributes, AdmissionPlugin } from './admission.js';
import { admissionForbidden } from './admission-errors.js';

const MASTERS = 'system:masters';

/**
 * Kubernetes' CertificateSubjectRestriction: a CertificateSigningRequest created for the API
 * server's client signer (`<prefix>/svc-apiserver-client`) may not ask for `system:masters` among
 * the subject's organizations (403 `use of <signer> signer with system:masters group is not
 * allowed`); a request that does not parse is refused too (Kubernetes' `failed to parse CSR`).
 */
export class CertificateSubjectRestriction implements AdmissionPlugin {
  readonly name = 'CertificateSubjectRestriction';

  async validate(a: AdmissionAttributes): Promise<void> {
    if (a.operation !== 'CREATE' || a.subresource !== '' || !a.object) return;
    if (a.resource.group !== group('certificates') || a.resource.plural !== 'certificatesigningrequests') return;
    const spec = (a.object.spec ?? {}) as { signerName?: string; request?: string };
    const signer = naming().signerNames.apiserverClient;
    if (spec.signerName !== signer) return;
    let organizations: string[];
    try {
      organizations = subjectOrganizations(spec.request ?? '');
    } catch (e) {
      throw admissionForbidden(a, `failed to parse CSR: ${(e as Error).message}`);
    }
    if (organizations.includes(MASTERS)) {
      throw admissionForbidden(a, `use of ${signer} signer with ${MASTERS} group is not allowed`);
    }
  }
}

/** The subject's O values of `request` (base64 of PEM, as `spec.request` is on the wire). */
function subjectOrganizations(request: string): string[] {
  const [block] = pemBlocks(Buffer.from(request, 'base64').toString('utf8'));
  if (block?.type !== 'CERTIFICATE REQUEST') throw new Error('PEM block type must be CERTIFICATE REQUEST');
  let csr: x509.Pkcs10CertificateRequest;
  try {
    csr = new x509.Pkcs10CertificateRequest(block.der);
  } catch {
    throw new Error('x509: malformed certificate request');
  }
  return csr.subjectName.getField('O');
}
