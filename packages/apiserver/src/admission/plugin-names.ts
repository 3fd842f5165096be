/**
 * Every admission plugin of the spec's two lists, in the order Kubernetes 1.32 runs them
 * (kube-apiserver's AllOrderedPlugins restricted to the spec's names): the order of
 * `--enable-admission-plugins` does not matter. Webhooks, policies and ResourceQuota come last.
 */
export const ORDERED_ADMISSION_PLUGINS = [
  'AlwaysAdmit',
  'NamespaceAutoProvision',
  'NamespaceLifecycle',
  'NamespaceExists',
  'LimitPodHardAntiAffinityTopology',
  'LimitRanger',
  'ServiceAccount',
  'NodeRestriction',
  'TaintNodesByCondition',
  'AlwaysPullImages',
  'ImagePolicyWebhook',
  'PodSecurity',
  'PodNodeSelector',
  'Priority',
  'DefaultTolerationSeconds',
  'PodTolerationRestriction',
  'EventRateLimit',
  'ExtendedResourceToleration',
  'DefaultStorageClass',
  'StorageObjectInUseProtection',
  'OwnerReferencesPermissionEnforcement',
  'PersistentVolumeClaimResize',
  'RuntimeClass',
  'CertificateApproval',
  'CertificateSigning',
  'ClusterTrustBundleAttest',
  'CertificateSubjectRestriction',
  'DefaultIngressClass',
  'DenyServiceExternalIPs',
  'MutatingAdmissionWebhook',
  'ValidatingAdmissionPolicy',
  'ValidatingAdmissionWebhook',
  'ResourceQuota',
  'AlwaysDeny',
] as const;

export type AdmissionPluginName = (typeof ORDERED_ADMISSION_PLUGINS)[number];

/** On unless `--disable-admission-plugins` names them (the spec's default-enabled list). */
export const DEFAULT_ENABLED_ADMISSION_PLUGINS: ReadonlySet<AdmissionPluginName> = new Set([
  'NamespaceLifecycle',
  'LimitRanger',
  'ServiceAccount',
  'TaintNodesByCondition',
  'PodSecurity',
  'Priority',
  'DefaultTolerationSeconds',
  'DefaultStorageClass',
  'StorageObjectInUseProtection',
  'PersistentVolumeClaimResize',
  'RuntimeClass',
  'CertificateApproval',
  'CertificateSigning',
  'ClusterTrustBundleAttest',
  'CertificateSubjectRestriction',
  'DefaultIngressClass',
  'MutatingAdmissionWebhook',
  'ValidatingAdmissionPolicy',
  'ValidatingAdmissionWebhook',
  'ResourceQuota',
]);

export function isAdmissionPluginName(name: string): name is AdmissionPluginName {
  return (ORDERED_ADMISSION_PLUGINS as readonly string[]).includes(name);
}

/**
 * The plugins that run, in Kubernetes' order: the default ones and `enable`, less `disable`.
 * An unknown name or one named in both lists is an error (the binary exits 2 with its message).
 */
export function enabledAdmissionPlugins(o: {
  enable: readonly string[];
  disable: readonly string[];
}): AdmissionPluginName[] {
  for (const n of [...o.enable, ...o.disable]) {
    if (!isAdmissionPluginName(n)) {
      throw new Error(`unknown admission plugin: ${n}; known plugins: ${ORDERED_ADMISSION_PLUGINS.join(', ')}`);
    }
  }
  const both = o.enable.filter((n) => o.disable.includes(n));
  if (both.length > 0) {
    throw new Error(`${both.join(', ')} in both --enable-admission-plugins and --disable-admission-plugins`);
  }
  const on = new Set<string>([...DEFAULT_ENABLED_ADMISSION_PLUGINS, ...o.enable]);
  for (const n of o.disable) on.delete(n);
  return ORDERED_ADMISSION_PLUGINS.filter((n) => on.has(n));
}
