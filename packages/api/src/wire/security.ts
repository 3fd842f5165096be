import type { ObjectFieldSelector } from './container.js';

/** core/v1 security contexts and volumes: the parts admission (Pod Security, ServiceAccount) reads and writes. */

export interface SELinuxOptions {
  user?: string;
  role?: string;
  type?: string;
  level?: string;
}

/** A seccomp or AppArmor profile: `RuntimeDefault`, `Localhost` (with `localhostProfile`) or `Unconfined`. */
export interface SecurityProfile {
  type: string;
  localhostProfile?: string;
}

export interface WindowsSecurityContextOptions {
  gmsaCredentialSpecName?: string;
  gmsaCredentialSpec?: string;
  runAsUserName?: string;
  hostProcess?: boolean;
}

export interface Capabilities {
  add?: string[];
  drop?: string[];
}

export interface Sysctl {
  name: string;
  value: string;
}

export interface PodSecurityContext {
  seLinuxOptions?: SELinuxOptions;
  runAsUser?: number;
  runAsNonRoot?: boolean;
  supplementalGroups?: number[];
  fsGroup?: number;
  runAsGroup?: number;
  sysctls?: Sysctl[];
  windowsOptions?: WindowsSecurityContextOptions;
  seccompProfile?: SecurityProfile;
  appArmorProfile?: SecurityProfile;
}

export interface SecurityContext {
  capabilities?: Capabilities;
  privileged?: boolean;
  seLinuxOptions?: SELinuxOptions;
  runAsUser?: number;
  runAsNonRoot?: boolean;
  readOnlyRootFilesystem?: boolean;
  allowPrivilegeEscalation?: boolean;
  runAsGroup?: number;
  /** `Default` or `Unmasked`. */
  procMount?: string;
  windowsOptions?: WindowsSecurityContextOptions;
  seccompProfile?: SecurityProfile;
  appArmorProfile?: SecurityProfile;
}

export interface VolumeMount {
  name: string;
  mountPath: string;
  readOnly?: boolean;
  subPath?: string;
  mountPropagation?: string;
  subPathExpr?: string;
  recursiveReadOnly?: string;
}

export interface KeyToPath {
  key: string;
  path: string;
  mode?: number;
}

export interface DownwardAPIVolumeFile {
  path: string;
  fieldRef?: ObjectFieldSelector;
  mode?: number;
}

/** A ConfigMap or Secret projection. */
export interface NamedProjection {
  name?: string;
  items?: KeyToPath[];
  optional?: boolean;
}

export interface VolumeProjection {
  secret?: NamedProjection;
  downwardAPI?: { items?: DownwardAPIVolumeFile[] };
  configMap?: NamedProjection;
  serviceAccountToken?: { audience?: string; expirationSeconds?: number; path: string };
}

export interface ProjectedVolumeSource {
  sources?: VolumeProjection[];
  defaultMode?: number;
}

/**
 * A pod volume: its name and exactly one source, JSON-inlined under the source's name
 * (`hostPath`, `secret`, `projected`, ...). The schema builds the sources from a table, so the
 * conformance check sees only `name`: read a source as `v.projected as ProjectedVolumeSource`.
 */
export interface Volume {
  name: string;
  [source: string]: unknown;
}
