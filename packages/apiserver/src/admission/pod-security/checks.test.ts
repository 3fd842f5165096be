// Every Pod Security check at its levels and versions, with Kubernetes 1.32's reasons and details.
import { useNaming, type ObjectMeta, type PodSpec } from '@svc/api';
import { Evaluator, aggregate, forbiddenDetail } from './evaluator.js';
import { LATEST, minorVersion, parseLevel, parseVersion, type Level, type Version } from './policy.js';

useNaming('svc');
const evaluator = new Evaluator();

const hardened = () => ({ allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } });

/** A pod that passes restricted:latest: the base every case changes one thing of. */
function restrictedPod(): PodSpec {
  return {
    securityContext: { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } },
    initContainers: [{ name: 'init', image: 'busybox', securityContext: hardened() }],
    containers: [{ name: 'c', image: 'busybox', securityContext: hardened() }],
  };
}

function verdict(o: { level: Level; version?: Version; spec: PodSpec; meta?: ObjectMeta }): string {
  const r = aggregate(evaluator.evaluate({ level: o.level, version: o.version ?? LATEST }, o.meta ?? {}, o.spec));
  return r.allowed ? 'allowed' : forbiddenDetail(r);
}

function changed(f: (s: PodSpec) => void): PodSpec {
  const s = restrictedPod();
  f(s);
  return s;
}

const c = (s: PodSpec) => s.containers[0]!;
const init = (s: PodSpec) => s.initContainers![0]!;

it('the base pod passes every level', () => {
  for (const level of ['privileged', 'baseline', 'restricted'] as const) {
    expect(verdict({ level, spec: restrictedPod() })).toBe('allowed');
  }
});

describe('baseline checks (also enforced by restricted)', () => {
  const cases: Array<{ name: string; spec: PodSpec; meta?: ObjectMeta; baseline: string; restricted?: string }> = [
    {
      name: 'host namespaces',
      spec: changed((s) => Object.assign(s, { hostNetwork: true, hostPID: true, hostIPC: true })),
      baseline: 'host namespaces (hostNetwork=true, hostPID=true, hostIPC=true)',
    },
    {
      name: 'privileged',
      spec: changed((s) => (c(s).securityContext!.privileged = true)),
      baseline: 'privileged (container "c" must not set securityContext.privileged=true)',
    },
    {
      name: 'capabilities',
      spec: changed((s) => (c(s).securityContext!.capabilities!.add = ['NET_ADMIN', 'CHOWN', 'SYS_TIME'])),
      baseline:
        'non-default capabilities (container "c" must not include "NET_ADMIN", "SYS_TIME" in securityContext.capabilities.add)',
      restricted:
        'unrestricted capabilities (container "c" must not include "CHOWN", "NET_ADMIN", "SYS_TIME" in securityContext.capabilities.add)',
    },
    {
      name: 'hostPath volumes',
      spec: changed((s) => (s.volumes = [{ name: 'h', hostPath: { path: '/' } }])),
      baseline: 'hostPath volumes (volume "h")',
      restricted: 'restricted volume types (volume "h" uses restricted volume type "hostPath")',
    },
    {
      name: 'host ports',
      spec: changed((s) => {
        c(s).ports = [
          { containerPort: 80, hostPort: 8080 },
          { containerPort: 81, hostPort: 10 },
          { containerPort: 82 },
        ];
        init(s).ports = [{ containerPort: 9, hostPort: 9 }];
      }),
      baseline: 'hostPort (containers "init", "c" use hostPorts 10, 8080, 9)',
    },
    {
      name: 'AppArmor',
      spec: changed((s) => {
        s.securityContext!.appArmorProfile = { type: 'Unconfined' };
        c(s).securityContext!.appArmorProfile = { type: 'Unconfined' };
        init(s).securityContext!.appArmorProfile = { type: 'Localhost', localhostProfile: 'p' };
      }),
      meta: {
        annotations: {
          'container.apparmor.security.beta.svc.io/c': 'unconfined',
          'container.apparmor.security.beta.svc.io/init': 'runtime/default',
        },
      },
      baseline:
        'forbidden AppArmor profiles (pod and container "c" and annotation must not set AppArmor profile type to "Unconfined", "container.apparmor.security.beta.svc.io/c="unconfined"")',
    },
    {
      name: 'SELinux',
      spec: changed((s) => {
        s.securityContext!.seLinuxOptions = { type: 'spc_t', user: 'u' };
        c(s).securityContext!.seLinuxOptions = { role: 'r' };
        init(s).securityContext!.seLinuxOptions = { type: 'container_t', level: 's0:c1' };
      }),
      baseline:
        'seLinuxOptions (pod and container "c" set forbidden securityContext.seLinuxOptions: type "spc_t"; user may not be set; role may not be set)',
    },
    {
      name: '/proc mount',
      spec: changed((s) => {
        c(s).securityContext!.procMount = 'Unmasked';
        init(s).securityContext!.procMount = 'Default';
      }),
      baseline: 'procMount (container "c" must not set securityContext.procMount to "Unmasked")',
    },
    {
      name: 'seccomp',
      spec: changed((s) => {
        s.securityContext!.seccompProfile = { type: 'Unconfined' };
        c(s).securityContext!.seccompProfile = { type: 'Localhost', localhostProfile: 'p' };
      }),
      baseline: 'seccompProfile (pod must not set securityContext.seccompProfile.type to "Unconfined")',
    },
    {
      name: 'sysctls',
      spec: changed((s) => {
        s.securityContext!.sysctls = [
          { name: 'kernel.msgmax', value: '1' },
          { name: 'net.ipv4.tcp_rmem', value: '4096 87380 16777216' },
          { name: 'kernel.sem', value: '1' },
        ];
      }),
      baseline: 'forbidden sysctls (kernel.msgmax, kernel.sem)',
    },
    {
      name: 'Windows host process',
      spec: changed((s) => {
        s.securityContext!.windowsOptions = { hostProcess: true };
        c(s).securityContext!.windowsOptions = { hostProcess: true };
        init(s).securityContext!.windowsOptions = { hostProcess: false };
      }),
      baseline: 'hostProcess (pod and container "c" must not set securityContext.windowsOptions.hostProcess=true)',
    },
  ];
  it.each(cases)('$name', ({ spec, meta, baseline, restricted }) => {
    expect(verdict({ level: 'privileged', spec, meta })).toBe('allowed');
    expect(verdict({ level: 'baseline', spec, meta })).toBe(baseline);
    expect(verdict({ level: 'restricted', spec, meta })).toBe(restricted ?? baseline);
  });
});

describe('restricted checks (baseline allows these)', () => {
  const cases: Array<{ name: string; spec: PodSpec; restricted: string }> = [
    {
      name: 'privilege escalation',
      spec: changed((s) => {
        delete c(s).securityContext!.allowPrivilegeEscalation;
        init(s).securityContext!.allowPrivilegeEscalation = true;
      }),
      restricted:
        'allowPrivilegeEscalation != false (containers "init", "c" must set securityContext.allowPrivilegeEscalation=false)',
    },
    {
      name: 'capabilities not dropped',
      spec: changed((s) => {
        c(s).securityContext!.capabilities = { drop: ['NET_RAW'], add: ['NET_BIND_SERVICE'] };
        delete init(s).securityContext!.capabilities;
      }),
      restricted:
        'unrestricted capabilities (containers "init", "c" must set securityContext.capabilities.drop=["ALL"])',
    },
    {
      name: 'volume types',
      spec: changed((s) => {
        s.volumes = [
          { name: 'e', emptyDir: {} },
          { name: 'n', nfs: { server: 'x', path: '/' } },
          { name: 'p', projected: { sources: [] } },
          { name: 'g', gitRepo: { repository: 'r' } },
          { name: 'i', image: { reference: 'x' } },
        ];
      }),
      restricted:
        'restricted volume types (volumes "n", "g", "i" use restricted volume types "gitRepo", "nfs", "unknown")',
    },
    {
      name: 'running as non-root: set false',
      spec: changed((s) => {
        s.securityContext!.runAsNonRoot = false;
        c(s).securityContext!.runAsNonRoot = false;
        init(s).securityContext!.runAsNonRoot = true;
      }),
      restricted: 'runAsNonRoot != true (pod and container "c" must not set securityContext.runAsNonRoot=false)',
    },
    {
      name: 'running as non-root: unset',
      spec: changed((s) => delete s.securityContext!.runAsNonRoot),
      restricted: 'runAsNonRoot != true (pod or containers "init", "c" must set securityContext.runAsNonRoot=true)',
    },
    {
      name: 'running as non-root user',
      spec: changed((s) => {
        s.securityContext!.runAsUser = 0;
        c(s).securityContext!.runAsUser = 0;
        init(s).securityContext!.runAsUser = 1000;
      }),
      restricted: 'runAsUser=0 (pod and container "c" must not set runAsUser=0)',
    },
    {
      name: 'seccomp unset',
      spec: changed((s) => {
        delete s.securityContext!.seccompProfile;
        init(s).securityContext!.seccompProfile = { type: 'RuntimeDefault' };
      }),
      restricted:
        'seccompProfile (pod or container "c" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")',
    },
  ];
  it.each(cases)('$name', ({ spec, restricted }) => {
    expect(verdict({ level: 'baseline', spec })).toBe('allowed');
    expect(verdict({ level: 'restricted', spec })).toBe(restricted);
  });

  it('a container of its own passes where the pod sets nothing', () => {
    const spec = changed((s) => {
      delete s.securityContext;
      for (const x of [c(s), init(s)]) {
        x.securityContext = {
          ...hardened(),
          runAsNonRoot: true,
          seccompProfile: { type: 'Localhost', localhostProfile: 'p' },
        };
      }
    });
    expect(verdict({ level: 'restricted', spec })).toBe('allowed');
  });

  it('ephemeral containers are checked after init containers and containers', () => {
    const spec = changed((s) => (s.ephemeralContainers = [{ name: 'debug', image: 'busybox' }]));
    expect(verdict({ level: 'restricted', spec })).toBe(
      'allowPrivilegeEscalation != false (container "debug" must set securityContext.allowPrivilegeEscalation=false), unrestricted capabilities (container "debug" must set securityContext.capabilities.drop=["ALL"])',
    );
  });
});

it('orders the reasons as Kubernetes does: baseline checks by id, then restricted by id', () => {
  const spec: PodSpec = { hostNetwork: true, containers: [{ name: 'c', securityContext: { privileged: true } }] };
  expect(verdict({ level: 'restricted', spec })).toBe(
    [
      'host namespaces (hostNetwork=true)',
      'privileged (container "c" must not set securityContext.privileged=true)',
      'allowPrivilegeEscalation != false (container "c" must set securityContext.allowPrivilegeEscalation=false)',
      'unrestricted capabilities (container "c" must set securityContext.capabilities.drop=["ALL"])',
      'runAsNonRoot != true (pod or container "c" must set securityContext.runAsNonRoot=true)',
      'seccompProfile (pod or container "c" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")',
    ].join(', '),
  );
});

describe('versions', () => {
  const at = (minor: number): Version => minorVersion(minor);

  it('a version newer than every check, and latest, evaluate as v1.32', () => {
    const spec = changed((s) => (s.securityContext!.sysctls = [{ name: 'net.ipv4.tcp_wmem', value: '1 2 3' }]));
    expect(verdict({ level: 'baseline', version: at(32), spec })).toBe('allowed');
    expect(verdict({ level: 'baseline', version: at(40), spec })).toBe('allowed');
    expect(verdict({ level: 'baseline', version: at(31), spec })).toBe('forbidden sysctls (net.ipv4.tcp_wmem)');
  });

  it('sysctls allowed grow at 1.27 and 1.29', () => {
    const spec = (name: string) => changed((s) => (s.securityContext!.sysctls = [{ name, value: '1' }]));
    expect(verdict({ level: 'baseline', version: at(26), spec: spec('net.ipv4.ip_local_reserved_ports') })).toBe(
      'forbidden sysctls (net.ipv4.ip_local_reserved_ports)',
    );
    expect(verdict({ level: 'baseline', version: at(27), spec: spec('net.ipv4.ip_local_reserved_ports') })).toBe(
      'allowed',
    );
    expect(verdict({ level: 'baseline', version: at(28), spec: spec('net.ipv4.tcp_keepalive_time') })).toBe(
      'forbidden sysctls (net.ipv4.tcp_keepalive_time)',
    );
    expect(verdict({ level: 'baseline', version: at(29), spec: spec('net.ipv4.tcp_keepalive_time') })).toBe('allowed');
  });

  it('SELinux type container_engine_t from 1.31', () => {
    const spec = changed((s) => (s.securityContext!.seLinuxOptions = { type: 'container_engine_t' }));
    expect(verdict({ level: 'baseline', version: at(30), spec })).toBe(
      'seLinuxOptions (pod set forbidden securityContext.seLinuxOptions: type "container_engine_t")',
    );
    expect(verdict({ level: 'baseline', version: at(31), spec })).toBe('allowed');
  });

  it('seccomp: annotations before 1.19, fields from 1.19; restricted requires a profile from 1.19', () => {
    const annotated = {
      annotations: {
        'seccomp.security.alpha.svc.io/pod': 'unconfined',
        'container.seccomp.security.alpha.svc.io/c': 'docker/default',
        'container.seccomp.security.alpha.svc.io/init': 'localhost/x',
      },
    };
    const spec = changed((s) => (s.securityContext!.seccompProfile = { type: 'Unconfined' }));
    expect(verdict({ level: 'baseline', version: at(18), spec, meta: annotated })).toBe(
      'seccompProfile (forbidden annotation seccomp.security.alpha.svc.io/pod="unconfined")',
    );
    expect(verdict({ level: 'baseline', version: at(19), spec, meta: annotated })).toBe(
      'seccompProfile (pod must not set securityContext.seccompProfile.type to "Unconfined")',
    );
    const unset = changed((s) => delete s.securityContext!.seccompProfile);
    expect(verdict({ level: 'restricted', version: at(18), spec: unset })).toBe('allowed');
    expect(verdict({ level: 'restricted', version: at(19), spec: unset })).toMatch(/^seccompProfile \(pod or /);
  });

  it('privilege escalation from 1.8, dropping capabilities from 1.22 (baseline capabilities before), runAsUser from 1.23', () => {
    const noEscalation = changed((s) => delete c(s).securityContext!.allowPrivilegeEscalation);
    expect(verdict({ level: 'restricted', version: at(7), spec: noEscalation })).toBe('allowed');
    expect(verdict({ level: 'restricted', version: at(8), spec: noEscalation })).toMatch(/^allowPrivilegeEscalation/);

    const addsAdmin = changed((s) => (c(s).securityContext!.capabilities = { add: ['NET_ADMIN'] }));
    expect(verdict({ level: 'restricted', version: at(21), spec: addsAdmin })).toBe(
      'non-default capabilities (container "c" must not include "NET_ADMIN" in securityContext.capabilities.add)',
    );
    expect(verdict({ level: 'restricted', version: at(22), spec: addsAdmin })).toBe(
      'unrestricted capabilities (container "c" must set securityContext.capabilities.drop=["ALL"]; container "c" must not include "NET_ADMIN" in securityContext.capabilities.add)',
    );

    const root = changed((s) => (s.securityContext!.runAsUser = 0));
    expect(verdict({ level: 'restricted', version: at(22), spec: root })).toBe('allowed');
    expect(verdict({ level: 'restricted', version: at(23), spec: root })).toBe(
      'runAsUser=0 (pod must not set runAsUser=0)',
    );
  });

  it('Windows pods skip the Linux-only restricted controls from 1.25', () => {
    const windows: PodSpec = {
      os: { name: 'windows' },
      securityContext: { runAsNonRoot: true },
      containers: [{ name: 'c', image: 'w' }],
    };
    expect(verdict({ level: 'restricted', version: at(25), spec: windows })).toBe('allowed');
    expect(verdict({ level: 'restricted', version: at(24), spec: windows })).toBe(
      [
        'allowPrivilegeEscalation != false (container "c" must set securityContext.allowPrivilegeEscalation=false)',
        'unrestricted capabilities (container "c" must set securityContext.capabilities.drop=["ALL"])',
        'seccompProfile (pod or container "c" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")',
      ].join(', '),
    );
  });
});

it('parses levels and versions as Kubernetes does', () => {
  expect(parseLevel('baseline')).toBe('baseline');
  expect(parseLevel('Baseline')).toBeUndefined();
  expect(parseVersion('latest')).toEqual(LATEST);
  expect(parseVersion('v1.0')).toEqual(minorVersion(0));
  expect(parseVersion('v1.25')).toEqual(minorVersion(25));
  for (const bad of ['v1.025', 'v2.1', '1.25', 'v1.', 'v1.x', 'Latest']) expect(parseVersion(bad)).toBeUndefined();
});
