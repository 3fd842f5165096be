import { group } from '@svc/api';
import type { AdmissionPlugin } from '../admission.js';
import type { AdmissionContext } from '../plugins.js';
import { PolicyParamAuthorization } from './param-authorization.js';
import { ValidatingAdmissionPolicyPlugin } from './plugin.js';
import { PolicyStatusController } from './status-controller.js';

/**
 * The `ValidatingAdmissionPolicy` plugin, and with it the policy status controller (which
 * Kubernetes runs in the controller manager; see status-controller.ts for why it runs here).
 */
export function validatingAdmissionPolicy(c: AdmissionContext): AdmissionPlugin {
  const namespaces = { group: '', version: 'v1', resource: 'namespaces' };
  const plugin = new ValidatingAdmissionPolicyPlugin({
    catalog: c.catalog,
    storeFor: (r) => c.storeFor(r),
    readNamespace: (name) => c.read(namespaces, { namespace: '', name }),
    authorizer: c.authorizer,
    signal: c.signal,
    log: c.log,
  });
  new PolicyStatusController({
    policies: plugin.policies,
    catalog: c.catalog,
    store: () => {
      const t = c.catalog.lookup(group('admissionregistration'), 'v1', 'validatingadmissionpolicies');
      if (!t) throw new Error('validatingadmissionpolicies are not served');
      return c.storeFor(t);
    },
    log: c.log,
    signal: c.signal,
  });
  return plugin;
}

/** Kubernetes' param read check on policy and binding writes (param-authorization.ts). */
export function policyParamAuthorization(c: AdmissionContext): AdmissionPlugin {
  const policies = { group: group('admissionregistration'), version: 'v1', resource: 'validatingadmissionpolicies' };
  return new PolicyParamAuthorization({
    authorizer: c.authorizer,
    catalog: c.catalog,
    policy: (name) => c.read(policies, { namespace: '', name }),
  });
}
