import { group, isNotFound, naming, type CertificateSigningRequest, type SubjectAccessReview } from '@svc/api';
import { ResourceClient } from '@svc/client';
import { informer, newController, type ControllerDefinition } from '../controller-context.js';
import { R } from '../resources.js';
import {
  approvalOf,
  nodeClientProblem,
  parseCertificateRequest,
  withCondition,
  type CertificateRequest,
} from './csr-rules.js';

interface Recognizer {
  /** `certificatesigningrequests/<subresource>` the requestor needs `create` on. */
  subresource: string;
  recognize(csr: CertificateSigningRequest, req: CertificateRequest): boolean;
  message: string;
}

/** A node agent's client certificate request: its signer and Kubernetes' IsKubeletClientCSR. */
const isNodeClient = (csr: CertificateSigningRequest, req: CertificateRequest): boolean =>
  csr.spec.signerName === naming().signerNames.apiserverClientNodeAgent &&
  nodeClientProblem(req, csr.spec.usages ?? []) === undefined;

/** Tried in order; the first whose permission the requestor has approves (Kubernetes' recognizers). */
function recognizers(): Recognizer[] {
  const agent = naming().nodeAgentName;
  return [
    {
      subresource: 'selfnodeclient',
      recognize: (csr, req) => csr.spec.username === req.commonName && isNodeClient(csr, req),
      message: `Auto approving self ${agent} client certificate after SubjectAccessReview.`,
    },
    {
      subresource: 'nodeclient',
      recognize: isNodeClient,
      message: `Auto approving ${agent} client certificate after SubjectAccessReview.`,
    },
  ];
}

/**
 * `certificatesigningrequest-approving-controller` (`csrapproving`): approves node agents'
 * client certificate requests whose requestor (user, uid, groups, extra of the request) may
 * `create` `certificatesigningrequests/selfnodeclient` (renewing its own identity) or
 * `/nodeclient`, as a SubjectAccessReview answers; the approval goes through `/approval` with
 * reason `AutoApproved`. Requests already approved, denied or issued are left alone; a
 * recognized request the requestor may not have approved is looked at again with back-off
 * (as Kubernetes), so a binding created later still approves it.
 */
export const csrApprovingController: ControllerDefinition = {
  name: 'certificatesigningrequest-approving-controller',
  build(ctx) {
    const csrs = informer<CertificateSigningRequest>(ctx, R.csrs());
    const api = new ResourceClient<CertificateSigningRequest>(ctx.client, R.csrs());
    const reviews = new ResourceClient<SubjectAccessReview>(ctx.client, R.subjectAccessReviews());
    const allowed = async (csr: CertificateSigningRequest, subresource: string): Promise<boolean> => {
      const { username, uid, groups, extra } = csr.spec;
      const review = await reviews.create({
        apiVersion: `${group('authorization')}/v1`,
        kind: 'SubjectAccessReview',
        metadata: {},
        spec: {
          user: username,
          uid,
          groups,
          extra,
          resourceAttributes: {
            group: group('certificates'),
            resource: 'certificatesigningrequests',
            verb: 'create',
            subresource,
          },
        },
      });
      return review.status?.allowed === true;
    };
    const controller = newController(ctx, {
      name: 'certificatesigningrequest-approving-controller',
      queueName: 'csrapproving',
      reconcile: async (key) => {
        const csr = csrs.store.get(key);
        if (!csr || csr.status?.certificate) return;
        const { approved, denied } = approvalOf(csr);
        if (approved || denied) return;
        const req = parseCertificateRequest(csr.spec.request);
        const tried: string[] = [];
        for (const r of recognizers()) {
          if (!r.recognize(csr, req)) continue;
          tried.push(r.subresource);
          if (!(await allowed(csr, r.subresource))) continue;
          try {
            await api.update(
              withCondition(csr, { type: 'Approved', status: 'True', reason: 'AutoApproved', message: r.message }),
              { subresource: 'approval' },
            );
          } catch (e) {
            if (!isNotFound(e)) throw e;
          }
          return;
        }
        if (tried.length > 0)
          throw new Error(
            `recognized csr ${JSON.stringify(csr.metadata.name)} as [${tried.join(' ')}] but subject access review was not approved`,
          );
      },
    });
    controller.watch(csrs);
    return controller;
  },
};
