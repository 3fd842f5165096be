import { securityAnnotationKey, type ObjectMeta, type PodSpec, type SELinuxOptions } from '@svc/api';
import {
  ALLOWED,
  allContainers,
  containersPhrase,
  forbidden,
  goQuote,
  joinQuote,
  pluralize,
  sortedSet,
  type Check,
  type CheckResult,
} from './checks.js';
import { minorVersion as v } from './policy.js';

// The baseline level of the Pod Security Standards as Kubernetes 1.32 checks it: same ids,
// versions, reasons and details (the details name containers in init, regular, ephemeral order).

/** Whether a profile type (seccomp or AppArmor) is one baseline allows. */
function allowedProfileType(type: string | undefined): boolean {
  return type === 'RuntimeDefault' || type === 'Localhost';
}

/** The setters that break a rule: `pod`, then `containers "a", "b"`, joined by `and`. */
function setters(pod: boolean, containers: string[]): string[] {
  const out = pod ? ['pod'] : [];
  if (containers.length > 0) out.push(containersPhrase(containers));
  return out;
}

function appArmorProfile(meta: ObjectMeta, spec: PodSpec): CheckResult {
  const badValues: string[] = [];
  const podType = spec.securityContext?.appArmorProfile?.type;
  const podBad = spec.securityContext?.appArmorProfile !== undefined && !allowedProfileType(podType);
  if (podBad) badValues.push(podType ?? '');
  const badContainers: string[] = [];
  for (const c of allContainers(spec)) {
    const p = c.securityContext?.appArmorProfile;
    if (p && !allowedProfileType(p.type)) {
      badContainers.push(c.name);
      badValues.push(p.type);
    }
  }
  const who = setters(podBad, badContainers);
  const prefix = securityAnnotationKey('apparmor-container-prefix');
  const annotations = Object.entries(meta.annotations ?? {})
    .filter(
      ([k, val]) => k.startsWith(prefix) && !(val === '' || val === 'runtime/default' || val.startsWith('localhost/')),
    )
    .map(([k, val]) => `${k}=${goQuote(val)}`)
    .sort();
  const values = [...sortedSet(badValues), ...annotations];
  if (annotations.length > 0) who.push(pluralize('annotation', 'annotations', annotations.length));
  if (who.length === 0) return ALLOWED;
  return forbidden(
    pluralize('forbidden AppArmor profile', 'forbidden AppArmor profiles', values.length),
    `${who.join(' and ')} must not set AppArmor profile type to ${joinQuote(values)}`,
  );
}

const DEFAULT_CAPABILITIES = new Set([
  'AUDIT_WRITE',
  'CHOWN',
  'DAC_OVERRIDE',
  'FOWNER',
  'FSETID',
  'KILL',
  'MKNOD',
  'NET_BIND_SERVICE',
  'SETFCAP',
  'SETGID',
  'SETPCAP',
  'SETUID',
  'SYS_CHROOT',
]);

function capabilitiesBaseline(_meta: ObjectMeta, spec: PodSpec): CheckResult {
  const badContainers: string[] = [];
  const added: string[] = [];
  for (const c of allContainers(spec)) {
    const extra = (c.securityContext?.capabilities?.add ?? []).filter((cap) => !DEFAULT_CAPABILITIES.has(cap));
    if (extra.length > 0) {
      badContainers.push(c.name);
      added.push(...extra);
    }
  }
  if (badContainers.length === 0) return ALLOWED;
  return forbidden(
    'non-default capabilities',
    `${containersPhrase(badContainers)} must not include ${joinQuote(sortedSet(added))} in securityContext.capabilities.add`,
  );
}

function hostNamespaces(_meta: ObjectMeta, spec: PodSpec): CheckResult {
  const set: string[] = [];
  if (spec.hostNetwork) set.push('hostNetwork=true');
  if (spec.hostPID) set.push('hostPID=true');
  if (spec.hostIPC) set.push('hostIPC=true');
  return set.length === 0 ? ALLOWED : forbidden('host namespaces', set.join(', '));
}

function hostPathVolumes(_meta: ObjectMeta, spec: PodSpec): CheckResult {
  const names = (spec.volumes ?? []).filter((vol) => vol.hostPath != null).map((vol) => vol.name);
  if (names.length === 0) return ALLOWED;
  return forbidden('hostPath volumes', `${pluralize('volume', 'volumes', names.length)} ${joinQuote(names)}`);
}

function hostPorts(_meta: ObjectMeta, spec: PodSpec): CheckResult {
  const badContainers: string[] = [];
  const ports: string[] = [];
  for (const c of allContainers(spec)) {
    const used = (c.ports ?? []).filter((p) => (p.hostPort ?? 0) !== 0).map((p) => String(p.hostPort));
    if (used.length > 0) {
      badContainers.push(c.name);
      ports.push(...used);
    }
  }
  if (badContainers.length === 0) return ALLOWED;
  const distinct = sortedSet(ports);
  return forbidden(
    'hostPort',
    `${containersPhrase(badContainers)} ${pluralize('uses', 'use', badContainers.length)} ${pluralize('hostPort', 'hostPorts', distinct.length)} ${distinct.join(', ')}`,
  );
}

function privileged(_meta: ObjectMeta, spec: PodSpec): CheckResult {
  const bad = allContainers(spec)
    .filter((c) => c.securityContext?.privileged === true)
    .map((c) => c.name);
  if (bad.length === 0) return ALLOWED;
  return forbidden('privileged', `${containersPhrase(bad)} must not set securityContext.privileged=true`);
}

function procMount(_meta: ObjectMeta, spec: PodSpec): CheckResult {
  const badContainers: string[] = [];
  const types: string[] = [];
  for (const c of allContainers(spec)) {
    const pm = c.securityContext?.procMount;
    if (pm !== undefined && pm !== 'Default') {
      badContainers.push(c.name);
      types.push(pm);
    }
  }
  if (badContainers.length === 0) return ALLOWED;
  return forbidden(
    'procMount',
    `${containersPhrase(badContainers)} must not set securityContext.procMount to ${joinQuote(sortedSet(types))}`,
  );
}

const SELINUX_TYPES_1_0 = ['', 'container_t', 'container_init_t', 'container_kvm_t'];
const SELINUX_TYPES_1_31 = [...SELINUX_TYPES_1_0, 'container_engine_t'];

function seLinuxOptions(allowedTypes: readonly string[]): (meta: ObjectMeta, spec: PodSpec) => CheckResult {
  return (_meta, spec) => {
    const badTypes: string[] = [];
    let setUser = false;
    let setRole = false;
    const valid = (o: SELinuxOptions): boolean => {
      let ok = true;
      if (!allowedTypes.includes(o.type ?? '')) {
        ok = false;
        badTypes.push(o.type ?? '');
      }
      if (o.user) {
        ok = false;
        setUser = true;
      }
      if (o.role) {
        ok = false;
        setRole = true;
      }
      return ok;
    };
    const podOptions = spec.securityContext?.seLinuxOptions;
    const podBad = podOptions !== undefined && !valid(podOptions);
    const badContainers: string[] = [];
    for (const c of allContainers(spec)) {
      const o = c.securityContext?.seLinuxOptions;
      if (o && !valid(o)) badContainers.push(c.name);
    }
    const who = setters(podBad, badContainers);
    if (who.length === 0) return ALLOWED;
    const data: string[] = [];
    const types = sortedSet(badTypes);
    if (types.length > 0) data.push(`${pluralize('type', 'types', types.length)} ${joinQuote(types)}`);
    if (setUser) data.push('user may not be set');
    if (setRole) data.push('role may not be set');
    return forbidden(
      'seLinuxOptions',
      `${who.join(' and ')} set forbidden securityContext.seLinuxOptions: ${data.join('; ')}`,
    );
  };
}

function validSeccompAnnotation(value: string): boolean {
  return value === 'runtime/default' || value === 'docker/default' || value.startsWith('localhost/');
}

/** Before 1.19 seccomp was set by annotations. */
function seccompProfileBaseline10(meta: ObjectMeta, spec: PodSpec): CheckResult {
  const annotations = meta.annotations ?? {};
  const bad: string[] = [];
  const podKey = securityAnnotationKey('seccomp-pod');
  const podValue = annotations[podKey];
  if (podValue !== undefined && !validSeccompAnnotation(podValue)) bad.push(`${podKey}=${goQuote(podValue)}`);
  for (const c of allContainers(spec)) {
    const key = securityAnnotationKey('seccomp-container-prefix') + c.name;
    const value = annotations[key];
    if (value !== undefined && !validSeccompAnnotation(value)) bad.push(`${key}=${goQuote(value)}`);
  }
  const distinct = sortedSet(bad);
  if (distinct.length === 0) return ALLOWED;
  return forbidden(
    'seccompProfile',
    `forbidden ${pluralize('annotation', 'annotations', distinct.length)} ${distinct.join(', ')}`,
  );
}

/**
 * The seccomp rule of both levels: an explicit profile must be RuntimeDefault or Localhost;
 * with `requireSet` (restricted) every container must have one, its own or the pod's.
 */
export function seccompProfileCheck(requireSet: boolean): (meta: ObjectMeta, spec: PodSpec) => CheckResult {
  return (_meta, spec) => {
    const badValues: string[] = [];
    const podProfile = spec.securityContext?.seccompProfile;
    const podBad = podProfile !== undefined && !allowedProfileType(podProfile.type);
    if (podBad) badValues.push(podProfile.type);
    const podSet = podProfile !== undefined && !podBad;
    const explicit: string[] = [];
    const implicit: string[] = [];
    for (const c of allContainers(spec)) {
      const p = c.securityContext?.seccompProfile;
      if (p) {
        if (!allowedProfileType(p.type)) {
          explicit.push(c.name);
          badValues.push(p.type);
        }
      } else if (!podSet) implicit.push(c.name);
    }
    const who = setters(podBad, explicit);
    if (who.length > 0) {
      return forbidden(
        'seccompProfile',
        `${who.join(' and ')} must not set securityContext.seccompProfile.type to ${joinQuote(sortedSet(badValues))}`,
      );
    }
    if (requireSet && implicit.length > 0) {
      return forbidden(
        'seccompProfile',
        `pod or ${containersPhrase(implicit)} must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost"`,
      );
    }
    return ALLOWED;
  };
}

const SYSCTLS_1_0 = [
  'kernel.shm_rmid_forced',
  'net.ipv4.ip_local_port_range',
  'net.ipv4.tcp_syncookies',
  'net.ipv4.ping_group_range',
  'net.ipv4.ip_unprivileged_port_start',
];
const SYSCTLS_1_27 = [...SYSCTLS_1_0, 'net.ipv4.ip_local_reserved_ports'];
const SYSCTLS_1_29 = [
  ...SYSCTLS_1_27,
  'net.ipv4.tcp_keepalive_time',
  'net.ipv4.tcp_fin_timeout',
  'net.ipv4.tcp_keepalive_intvl',
  'net.ipv4.tcp_keepalive_probes',
];
const SYSCTLS_1_32 = [...SYSCTLS_1_29, 'net.ipv4.tcp_rmem', 'net.ipv4.tcp_wmem'];

function sysctls(allowed: readonly string[]): (meta: ObjectMeta, spec: PodSpec) => CheckResult {
  return (_meta, spec) => {
    const bad = (spec.securityContext?.sysctls ?? []).map((s) => s.name).filter((n) => !allowed.includes(n));
    return bad.length === 0 ? ALLOWED : forbidden('forbidden sysctls', bad.join(', '));
  };
}

function windowsHostProcess(_meta: ObjectMeta, spec: PodSpec): CheckResult {
  const bad = allContainers(spec)
    .filter((c) => c.securityContext?.windowsOptions?.hostProcess === true)
    .map((c) => c.name);
  const who = setters(spec.securityContext?.windowsOptions?.hostProcess === true, bad);
  if (who.length === 0) return ALLOWED;
  return forbidden('hostProcess', `${who.join(' and ')} must not set securityContext.windowsOptions.hostProcess=true`);
}

export const BASELINE_CHECKS: readonly Check[] = [
  { id: 'appArmorProfile', level: 'baseline', versions: [{ minimumVersion: v(0), check: appArmorProfile }] },
  {
    id: 'capabilities_baseline',
    level: 'baseline',
    versions: [{ minimumVersion: v(0), check: capabilitiesBaseline }],
  },
  { id: 'hostNamespaces', level: 'baseline', versions: [{ minimumVersion: v(0), check: hostNamespaces }] },
  { id: 'hostPathVolumes', level: 'baseline', versions: [{ minimumVersion: v(0), check: hostPathVolumes }] },
  { id: 'hostPorts', level: 'baseline', versions: [{ minimumVersion: v(0), check: hostPorts }] },
  { id: 'privileged', level: 'baseline', versions: [{ minimumVersion: v(0), check: privileged }] },
  { id: 'procMount', level: 'baseline', versions: [{ minimumVersion: v(0), check: procMount }] },
  {
    id: 'seLinuxOptions',
    level: 'baseline',
    versions: [
      { minimumVersion: v(0), check: seLinuxOptions(SELINUX_TYPES_1_0) },
      { minimumVersion: v(31), check: seLinuxOptions(SELINUX_TYPES_1_31) },
    ],
  },
  {
    id: 'seccompProfile_baseline',
    level: 'baseline',
    versions: [
      { minimumVersion: v(0), check: seccompProfileBaseline10 },
      { minimumVersion: v(19), check: seccompProfileCheck(false) },
    ],
  },
  {
    id: 'sysctls',
    level: 'baseline',
    versions: [
      { minimumVersion: v(0), check: sysctls(SYSCTLS_1_0) },
      { minimumVersion: v(27), check: sysctls(SYSCTLS_1_27) },
      { minimumVersion: v(29), check: sysctls(SYSCTLS_1_29) },
      { minimumVersion: v(32), check: sysctls(SYSCTLS_1_32) },
    ],
  },
  { id: 'windowsHostProcess', level: 'baseline', versions: [{ minimumVersion: v(0), check: windowsHostProcess }] },
];
