import { isNotFound, naming, type CertificateSigningRequest } from '@svc/api';
import { ResourceClient } from '@svc/client';
import { informer, newController, type ControllerDefinition } from '../controller-context.js';
import type { ControllerManagerOptions, SignerRole, SigningFiles } from '../options.js';
import { R } from '../resources.js';
import { CertificateAuthority, ReloadingAuthority, certificateTtl } from './csr-authority.js';
import {
  approvalOf,
  hasTrueCondition,
  parseCertificateRequest,
  signerRules,
  withCondition,
  type SignerRule,
} from './csr-rules.js';

const NAME = 'certificatesigningrequest-signing-controller';

/** The signer name each `--cluster-signing-<signer>-*` role stands for under the current naming. */
function signerNameOf(role: SignerRole): string {
  const s = naming().signerNames;
  const names: Record<SignerRole, string> = {
    apiserverClient: s.apiserverClient,
    apiserverClientNode: s.apiserverClientNodeAgent,
    nodeServing: s.nodeAgentServing,
    legacyUnknown: s.legacyUnknown,
  };
  return names[role];
}

/**
 * The CA files of each signer the options configure: the generic `--cluster-signing-{cert,key}-file`
 * pair serves all four built-in signers, otherwise each per-signer pair its own; none: no signer.
 */
export function signingFilesBySigner(o: ControllerManagerOptions): Map<string, SigningFiles> {
  const out = new Map<string, SigningFiles>();
  const roles: SignerRole[] = ['apiserverClient', 'apiserverClientNode', 'nodeServing', 'legacyUnknown'];
  for (const role of roles) {
    const files = o.clusterSigning ?? o.signerFiles[role];
    if (files) out.set(signerNameOf(role), files);
  }
  return out;
}

const rfc3339Now = (): string => new Date().toISOString().replace(/\.\d+Z$/, 'Z');

/**
 * `certificatesigningrequest-signing-controller` (`csrsigning`): issues the certificate of every
 * request that is Approved, not Denied, not Failed and not yet issued, for each built-in signer
 * it has a CA for. A request that breaks its signer's rules gets a `Failed` condition (reason
 * `SignerValidationFailure`) instead; both go through `/status`. CA files are re-read when they
 * change. Requests of signers without a CA are left for someone else. Start-up fails when a
 * configured pair does not load (`preflight`).
 */
export const csrSigningController: ControllerDefinition = {
  name: NAME,
  async preflight(o) {
    const checked = new Set<string>();
    for (const [signer, files] of signingFilesBySigner(o)) {
      const id = `${files.certFile}\0${files.keyFile}`;
      if (checked.has(id)) continue;
      checked.add(id);
      try {
        await CertificateAuthority.load(files);
      } catch (e) {
        throw new Error(`failed to start the ${signer} signer: ${(e as Error).message}`, { cause: e });
      }
    }
  },
  async build(ctx) {
    const logger = ctx.logger.with({ controller: NAME });
    const rules = signerRules();
    const byFiles = new Map<string, ReloadingAuthority>();
    const signers = new Map<string, { authority: ReloadingAuthority; rule: SignerRule }>();
    for (const [signer, files] of signingFilesBySigner(ctx.options)) {
      const id = `${files.certFile}\0${files.keyFile}`;
      let authority = byFiles.get(id);
      if (!authority) {
        authority = await ReloadingAuthority.load(files, (e) =>
          logger.warn('reloading the signing CA failed; signing with the previous one', {
            certFile: files.certFile,
            error: e.message,
          }),
        );
        byFiles.set(id, authority);
      }
      const rule = rules.get(signer);
      if (rule) signers.set(signer, { authority, rule });
    }
    if (signers.size === 0) {
      logger.info('no --cluster-signing-* CA configured; not signing any request');
      return {
        run: (signal) =>
          new Promise<void>((resolve) =>
            signal.aborted ? resolve() : signal.addEventListener('abort', () => resolve(), { once: true }),
          ),
      };
    }
    const csrs = informer<CertificateSigningRequest>(ctx, R.csrs());
    const api = new ResourceClient<CertificateSigningRequest>(ctx.client, R.csrs());
    const writeStatus = async (csr: CertificateSigningRequest): Promise<void> => {
      try {
        await api.update(csr, { subresource: 'status' });
      } catch (e) {
        if (!isNotFound(e)) throw e;
      }
    };
    const controller = newController(ctx, {
      name: NAME,
      queueName: 'csrsigning',
      workers: 5,
      reconcile: async (key) => {
        const csr = csrs.store.get(key);
        if (!csr || csr.status?.certificate) return;
        const { approved, denied } = approvalOf(csr);
        if (!approved || denied || hasTrueCondition(csr, 'Failed')) return;
        const signer = signers.get(csr.spec.signerName);
        if (!signer) return;
        const req = parseCertificateRequest(csr.spec.request);
        const usages = csr.spec.usages ?? [];
        const problem = signer.rule(req, usages);
        if (problem !== undefined) {
          await writeStatus(
            withCondition(csr, {
              type: 'Failed',
              status: 'True',
              reason: 'SignerValidationFailure',
              message: problem,
              lastUpdateTime: rfc3339Now(),
            }),
          );
          return;
        }
        const ca = await signer.authority.current();
        const pem = await ca.issue(req, {
          ttlMs: certificateTtl(ctx.options.clusterSigningDurationMs, csr.spec.expirationSeconds),
          usages,
        });
        await writeStatus({ ...csr, status: { ...csr.status, certificate: Buffer.from(pem).toString('base64') } });
        logger.v(2).info('signed certificate', { csr: key, signer: csr.spec.signerName });
      },
    });
    controller.watch(csrs);
    return controller;
  },
};
