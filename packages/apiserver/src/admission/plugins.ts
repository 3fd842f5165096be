import type { ApiObject, Catalog, ResourceType } from '@svc/api';
import type { Logger } from '@svc/component-base';
import type { Authorizer } from '../authz/authorizer.js';
import type { Authorization } from '../authz/rbac/setup.js';
import type { ApiServerMetrics } from '../metrics/metrics.js';
import type { ApiServerOptions } from '../options.js';
import type { GenericStore } from '../registry/store.js';
import { Admission, type AdmissionPlugin, type AdmissionStep } from './admission.js';
import type { AdmissionPluginConfigs } from './admission-config.js';
import { CertificateApproval, CertificateSigning } from './certificate-signers.js';
import { DefaultTolerationSeconds } from './default-toleration-seconds.js';
import { NamespaceLifecycle } from './namespace-lifecycle.js';
import { NodeRestriction } from './node-restriction.js';
import { newPodSecurity } from './pod-security/pod-security.js';
import type { AdmissionPluginName } from './plugin-names.js';
import { RbacEscalation } from './rbac-escalation.js';
import { newServiceAccountAdmission } from './service-account.js';
import { policyParamAuthorization, validatingAdmissionPolicy } from './policy/index.js';
import { newMutatingWebhook, newValidatingWebhook } from './webhook/plugin.js';
import { classGetter, classLister } from './default-class.js';
import { DefaultIngressClass } from './default-ingress-class.js';
import { DefaultStorageClass } from './default-storage-class.js';
import { PersistentVolumeClaimResize } from './persistent-volume-claim-resize.js';
import { StorageObjectInUseProtection } from './storage-object-in-use-protection.js';
import { AlwaysAdmit } from './always-admit.js';
import { AlwaysDeny } from './always-deny.js';
import { AlwaysPullImages } from './always-pull-images.js';
import { CertificateSubjectRestriction } from './certificate-subject-restriction.js';
import { ClusterTrustBundleAttest } from './cluster-trust-bundle-attest.js';
import { DenyServiceExternalIPs } from './deny-service-external-ips.js';
import { newEventRateLimit } from './event-rate-limit.js';
import { ExtendedResourceToleration } from './extended-resource-toleration.js';
import { newImagePolicyWebhook } from './image-policy-webhook.js';
import { LimitPodHardAntiAffinityTopology } from './limit-pod-hard-anti-affinity-topology.js';
import { newNamespaceAutoProvision } from './namespace-auto-provision.js';
import { newNamespaceExists } from './namespace-exists.js';
import { newOwnerReferencesPermissionEnforcement } from './owner-references-permission-enforcement.js';
import { newPodNodeSelector } from './pod-node-selector.js';
import { newPodTolerationRestriction } from './pod-toleration-restriction.js';
import { TaintNodesByCondition } from './taint-nodes-by-condition.js';
import { newLimitRanger } from './limit-ranger.js';
import { newPriority } from './priority.js';
import { newResourceQuotaAdmission } from './resource-quota.js';
import { newRuntimeClassAdmission } from './runtime-class.js';

/** What a plugin may use: the server's own reads and writes, its authorizer, flags and its configuration. */
export interface AdmissionContext {
  catalog: Catalog;
  storeFor(r: ResourceType): GenericStore;
  /** A served object, from the watch cache first; undefined when the type is not served or the object does not exist. */
  read(
    r: { group: string; version: string; resource: string },
    ref: { namespace: string; name: string },
  ): Promise<ApiObject | undefined>;
  authorizer: Authorizer;
  authorization: Authorization;
  opts: ApiServerOptions;
  metrics: ApiServerMetrics;
  log: Logger;
  /** Ends background work (informers, caches) when the server stops. */
  signal: AbortSignal;
  /** The plugin's configuration from `--admission-control-config-file`, if any. */
  config(name: AdmissionPluginName): unknown;
}

export type AdmissionPluginFactory = (ctx: AdmissionContext) => AdmissionPlugin;

/**
 * The plugins built so far, by name. A new plugin is one file under `admission/` and one line
 * here; its place in the chain comes from `ORDERED_ADMISSION_PLUGINS`.
 */
const FACTORIES: Partial<Record<AdmissionPluginName, AdmissionPluginFactory>> = {
  NamespaceLifecycle: (c) => {
    const namespaces = { group: '', version: 'v1', resource: 'namespaces' };
    return new NamespaceLifecycle((name) => c.read(namespaces, { namespace: '', name }));
  },
  ServiceAccount: newServiceAccountAdmission,
  NodeRestriction: () => new NodeRestriction(),
  PodSecurity: newPodSecurity,
  DefaultTolerationSeconds: (c) =>
    new DefaultTolerationSeconds({
      notReady: c.opts.defaultNotReadyTolerationSeconds,
      unreachable: c.opts.defaultUnreachableTolerationSeconds,
    }),
  CertificateApproval: (c) => new CertificateApproval(c.authorizer),
  CertificateSigning: (c) => new CertificateSigning(c.authorizer),
  ValidatingAdmissionPolicy: validatingAdmissionPolicy,
  MutatingAdmissionWebhook: newMutatingWebhook,
  ValidatingAdmissionWebhook: newValidatingWebhook,
  LimitRanger: newLimitRanger,
  Priority: newPriority,
  RuntimeClass: newRuntimeClassAdmission,
  ResourceQuota: newResourceQuotaAdmission,
  DefaultStorageClass: (c) => new DefaultStorageClass(classLister(c, 'storageclasses')),
  StorageObjectInUseProtection: () => new StorageObjectInUseProtection(),
  PersistentVolumeClaimResize: (c) => new PersistentVolumeClaimResize(classGetter(c, 'storageclasses')),
  DefaultIngressClass: (c) => new DefaultIngressClass(classLister(c, 'ingressclasses')),
  TaintNodesByCondition: () => new TaintNodesByCondition(),
  CertificateSubjectRestriction: () => new CertificateSubjectRestriction(),
  ClusterTrustBundleAttest: (c) => new ClusterTrustBundleAttest(c.authorizer),
  AlwaysAdmit: (c) => new AlwaysAdmit(c.log),
  AlwaysDeny: (c) => new AlwaysDeny(c.log),
  AlwaysPullImages: () => new AlwaysPullImages(),
  DenyServiceExternalIPs: () => new DenyServiceExternalIPs(),
  EventRateLimit: newEventRateLimit,
  ExtendedResourceToleration: () => new ExtendedResourceToleration(),
  ImagePolicyWebhook: newImagePolicyWebhook,
  LimitPodHardAntiAffinityTopology: () => new LimitPodHardAntiAffinityTopology(),
  NamespaceAutoProvision: newNamespaceAutoProvision,
  NamespaceExists: newNamespaceExists,
  OwnerReferencesPermissionEnforcement: newOwnerReferencesPermissionEnforcement,
  PodNodeSelector: newPodNodeSelector,
  PodTolerationRestriction: newPodTolerationRestriction,
};

export interface BuiltAdmission {
  admission: Admission;
  /** Enabled plugins that this server does not have yet (logged at start). */
  missing: AdmissionPluginName[];
}

/**
 * The admission chain of `names` (already in Kubernetes' order), then the steps that are not
 * plugins in Kubernetes but run as admission here: RBAC's escalation check (Kubernetes runs it
 * in the RBAC registry) and the policy param read check (in its admissionregistration registry).
 */
export function buildAdmission(ctx: AdmissionContext, names: readonly AdmissionPluginName[]): BuiltAdmission {
  const plugins: AdmissionPlugin[] = [];
  const missing: AdmissionPluginName[] = [];
  for (const name of names) {
    const factory = FACTORIES[name];
    if (factory) plugins.push(factory(ctx));
    else missing.push(name);
  }
  const rbac = ctx.authorization.rbac;
  if (rbac) plugins.push(new RbacEscalation(ctx.authorizer, rbac));
  plugins.push(policyParamAuthorization(ctx));
  const steps = ctx.metrics.admissionStepDuration;
  const observe = (s: AdmissionStep): void =>
    steps.observe({ type: s.type, operation: s.operation, rejected: String(s.rejected) }, s.seconds);
  return { admission: new Admission(plugins, observe), missing };
}

/** `AdmissionContext.config` over the file's plugin configurations. */
export function configLookup(configs: AdmissionPluginConfigs): (name: AdmissionPluginName) => unknown {
  return (name) => configs.get(name);
}
