import type { ObjectMeta, PodSpec, Volume } from '@svc/api';
import { seccompProfileCheck } from './baseline-checks.js';
import {
  ALLOWED,
  allContainers,
  containersPhrase,
  forbidden,
  isWindows,
  joinQuote,
  pluralize,
  sortedSet,
  type Check,
  type CheckPod,
  type CheckResult,
} from './checks.js';
import { minorVersion as v } from './policy.js';

// The restricted level of the Pod Security Standards as Kubernetes 1.32 checks it: same ids,
// versions, overrides of baseline checks, reasons and details.

/** From 1.25 a pod with `spec.os.name: windows` passes the Linux-only controls. */
function exceptWindows(check: CheckPod): CheckPod {
  return (meta, spec) => (isWindows(spec) ? ALLOWED : check(meta, spec));
}

function allowPrivilegeEscalation(_meta: ObjectMeta, spec: PodSpec): CheckResult {
  const bad = allContainers(spec)
    .filter((c) => c.securityContext?.allowPrivilegeEscalation !== false)
    .map((c) => c.name);
  if (bad.length === 0) return ALLOWED;
  return forbidden(
    'allowPrivilegeEscalation != false',
    `${containersPhrase(bad)} must set securityContext.allowPrivilegeEscalation=false`,
  );
}

function capabilitiesRestricted(_meta: ObjectMeta, spec: PodSpec): CheckResult {
  const missingDropAll: string[] = [];
  const addingForbidden: string[] = [];
  const forbiddenCaps: string[] = [];
  for (const c of allContainers(spec)) {
    const caps = c.securityContext?.capabilities;
    if (!caps) {
      missingDropAll.push(c.name);
      continue;
    }
    if (!(caps.drop ?? []).includes('ALL')) missingDropAll.push(c.name);
    const extra = (caps.add ?? []).filter((cap) => cap !== 'NET_BIND_SERVICE');
    if (extra.length > 0) {
      addingForbidden.push(c.name);
      forbiddenCaps.push(...extra);
    }
  }
  const details: string[] = [];
  if (missingDropAll.length > 0) {
    details.push(`${containersPhrase(missingDropAll)} must set securityContext.capabilities.drop=["ALL"]`);
  }
  if (addingForbidden.length > 0) {
    details.push(
      `${containersPhrase(addingForbidden)} must not include ${joinQuote(sortedSet(forbiddenCaps))} in securityContext.capabilities.add`,
    );
  }
  return details.length === 0 ? ALLOWED : forbidden('unrestricted capabilities', details.join('; '));
}

/** The volume sources restricted allows. */
const ALLOWED_VOLUME_SOURCES = [
  'configMap',
  'csi',
  'downwardAPI',
  'emptyDir',
  'ephemeral',
  'persistentVolumeClaim',
  'projected',
  'secret',
];

/** The restricted sources in the order Kubernetes names a volume's type by. */
const NAMED_VOLUME_SOURCES = [
  'hostPath',
  'gcePersistentDisk',
  'awsElasticBlockStore',
  'gitRepo',
  'nfs',
  'iscsi',
  'glusterfs',
  'rbd',
  'flexVolume',
  'cinder',
  'cephfs',
  'flocker',
  'fc',
  'azureFile',
  'vsphereVolume',
  'quobyte',
  'azureDisk',
  'photonPersistentDisk',
  'portworxVolume',
  'scaleIO',
  'storageos',
];

function hasSource(vol: Volume, source: string): boolean {
  return vol[source] != null;
}

function restrictedVolumes(_meta: ObjectMeta, spec: PodSpec): CheckResult {
  const badVolumes: string[] = [];
  const badTypes: string[] = [];
  for (const vol of spec.volumes ?? []) {
    if (ALLOWED_VOLUME_SOURCES.some((s) => hasSource(vol, s))) continue;
    badVolumes.push(vol.name);
    badTypes.push(NAMED_VOLUME_SOURCES.find((s) => hasSource(vol, s)) ?? 'unknown');
  }
  if (badVolumes.length === 0) return ALLOWED;
  const types = sortedSet(badTypes);
  return forbidden(
    'restricted volume types',
    `${pluralize('volume', 'volumes', badVolumes.length)} ${joinQuote(badVolumes)} ${pluralize('uses', 'use', badVolumes.length)} ${pluralize('restricted volume type', 'restricted volume types', types.length)} ${joinQuote(types)}`,
  );
}

function runAsNonRoot(_meta: ObjectMeta, spec: PodSpec): CheckResult {
  const podValue = spec.securityContext?.runAsNonRoot;
  const who: string[] = podValue === false ? ['pod'] : [];
  const explicit: string[] = [];
  const implicit: string[] = [];
  for (const c of allContainers(spec)) {
    const value = c.securityContext?.runAsNonRoot;
    if (value !== undefined) {
      if (!value) explicit.push(c.name);
    } else if (podValue !== true) implicit.push(c.name);
  }
  if (explicit.length > 0) who.push(containersPhrase(explicit));
  if (who.length > 0) {
    return forbidden('runAsNonRoot != true', `${who.join(' and ')} must not set securityContext.runAsNonRoot=false`);
  }
  if (implicit.length > 0) {
    return forbidden(
      'runAsNonRoot != true',
      `pod or ${containersPhrase(implicit)} must set securityContext.runAsNonRoot=true`,
    );
  }
  return ALLOWED;
}

function runAsUser(_meta: ObjectMeta, spec: PodSpec): CheckResult {
  const who: string[] = spec.securityContext?.runAsUser === 0 ? ['pod'] : [];
  const bad = allContainers(spec)
    .filter((c) => c.securityContext?.runAsUser === 0)
    .map((c) => c.name);
  if (bad.length > 0) who.push(containersPhrase(bad));
  return who.length === 0 ? ALLOWED : forbidden('runAsUser=0', `${who.join(' and ')} must not set runAsUser=0`);
}

export const RESTRICTED_CHECKS: readonly Check[] = [
  {
    id: 'allowPrivilegeEscalation',
    level: 'restricted',
    versions: [
      { minimumVersion: v(8), check: allowPrivilegeEscalation },
      { minimumVersion: v(25), check: exceptWindows(allowPrivilegeEscalation) },
    ],
  },
  {
    id: 'capabilities_restricted',
    level: 'restricted',
    versions: [
      { minimumVersion: v(22), check: capabilitiesRestricted, overrides: ['capabilities_baseline'] },
      { minimumVersion: v(25), check: exceptWindows(capabilitiesRestricted), overrides: ['capabilities_baseline'] },
    ],
  },
  {
    id: 'restrictedVolumes',
    level: 'restricted',
    versions: [{ minimumVersion: v(0), check: restrictedVolumes, overrides: ['hostPathVolumes'] }],
  },
  { id: 'runAsNonRoot', level: 'restricted', versions: [{ minimumVersion: v(0), check: runAsNonRoot }] },
  { id: 'runAsUser', level: 'restricted', versions: [{ minimumVersion: v(23), check: runAsUser }] },
  {
    id: 'seccompProfile_restricted',
    level: 'restricted',
    versions: [
      { minimumVersion: v(19), check: seccompProfileCheck(true), overrides: ['seccompProfile_baseline'] },
      {
        minimumVersion: v(25),
        check: exceptWindows(seccompProfileCheck(true)),
        overrides: ['seccompProfile_baseline'],
      },
    ],
  },
];
