// PodSecurity on a real server (etcd, HTTPS) with stock kubectl: enforce (403 with Kubernetes'
// message), warn (Warning headers, kubectl's `Warning:` lines), every check of both levels with a
// violating and a passing pod, versions, the defaults and exemptions of the admission
// configuration file, workload resources warned only, and namespace label checks and relabel
// warnings; then the Kubernetes label keys under --naming=kubernetes.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startKubectlEnv, uniqueName, type HttpResponse, type KubectlEnv, type Json } from '@svc/testing';
import type { PodSpec } from '@svc/api';

let dir: string;
let env: KubectlEnv;
const P = 'pod-security.svc.io';
const EXEMPT_TOKEN = 'exempt-user-token-0123456789';

/** The `Warning` headers' texts. */
function warnings(r: HttpResponse): string[] {
  const h = r.headers.warning;
  const all = h === undefined ? [] : Array.isArray(h) ? h : [h];
  return all.map((w) => JSON.parse(w.replace(/^299 - /, '')) as string);
}

async function namespace(labels: Record<string, string>, name = uniqueName('psa')): Promise<string> {
  const c = env.server.client;
  const r = await c.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels } });
  if (r.status !== 201) throw new Error(`namespace: ${r.status} ${r.text}`);
  // No controller manager runs here: the ServiceAccount plugin needs the default account.
  const sa = await c.post(`/api/v1/namespaces/${name}/serviceaccounts`, { metadata: { name: 'default' } });
  if (sa.status !== 201) throw new Error(`serviceaccount: ${sa.status} ${sa.text}`);
  return name;
}

function createPod(ns: string, spec: PodSpec, o: { name?: string; token?: string } = {}): Promise<HttpResponse> {
  const body = { apiVersion: 'v1', kind: 'Pod', metadata: { name: o.name ?? uniqueName('p') }, spec };
  return env.server.client.post(`/api/v1/namespaces/${ns}/pods`, body, o.token ? { token: o.token } : {});
}

const hardened = () => ({ allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } });
const restrictedPod = (): PodSpec => ({
  securityContext: { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } },
  containers: [{ name: 'c', image: 'busybox', securityContext: hardened() }],
});
const plainPod = (): PodSpec => ({ containers: [{ name: 'c', image: 'busybox' }] });

function changed(f: (s: PodSpec) => void): PodSpec {
  const s = restrictedPod();
  f(s);
  return s;
}
const sc = (s: PodSpec) => s.containers[0]!.securityContext!;

const RESTRICTED_DETAIL =
  'allowPrivilegeEscalation != false (container "c" must set securityContext.allowPrivilegeEscalation=false), ' +
  'unrestricted capabilities (container "c" must set securityContext.capabilities.drop=["ALL"]), ' +
  'runAsNonRoot != true (pod or container "c" must set securityContext.runAsNonRoot=true), ' +
  'seccompProfile (pod or container "c" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")';

describe('the default naming', () => {
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'svc-psa-'));
    const config = join(dir, 'admission.yaml');
    await writeFile(
      config,
      [
        'apiVersion: apiserver.config.svc.io/v1',
        'kind: AdmissionConfiguration',
        'plugins:',
        '- name: PodSecurity',
        '  configuration:',
        '    apiVersion: pod-security.admission.config.svc.io/v1',
        '    kind: PodSecurityConfiguration',
        '    defaults: {warn: baseline}',
        '    exemptions: {usernames: [exempt-user], namespaces: [exempt-ns], runtimeClasses: [kata]}',
      ].join('\n'),
    );
    env = await startKubectlEnv({
      // Privileged containers must pass validation to meet PodSecurity (as kubeadm clusters run).
      args: [`--admission-control-config-file=${config}`, '--allow-privileged=true'],
      tokens: [`${EXEMPT_TOKEN},exempt-user,exempt-uid,"system:masters"`],
    });
  });

  afterAll(async () => {
    await env.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('enforce: kubectl run is refused with Kubernetes message; a restricted pod is created', async () => {
    const ns = await namespace({ [`${P}/enforce`]: 'restricted' });
    const r = await env.run(['run', 'x', '--image=busybox', '-n', ns]);
    expect(r.code).not.toBe(0);
    expect(r.stderr.trim()).toBe(
      'Error from server (Forbidden): pods "x" is forbidden: violates PodSecurity "restricted:latest": ' +
        RESTRICTED_DETAIL.replaceAll('container "c"', 'container "x"'),
    );
    const ok = await createPod(ns, restrictedPod());
    expect(ok.status).toBe(201);
    expect(warnings(ok)).toEqual([]);
  });

  it('warn: kubectl prints the Warning and the pod is created', async () => {
    const ns = await namespace({ [`${P}/enforce`]: 'baseline', [`${P}/warn`]: 'restricted' });
    const r = await env.ok(['run', 'w', '--image=busybox', '-n', ns]);
    expect(r.stderr.trim()).toBe(
      `Warning: would violate PodSecurity "restricted:latest": ${RESTRICTED_DETAIL.replaceAll('container "c"', 'container "w"')}`,
    );
    expect(r.stdout.trim()).toBe('pod/w created');
  });

  describe('every check through the server', () => {
    let baseline: string;
    let restricted: string;
    beforeAll(async () => {
      baseline = await namespace({ [`${P}/enforce`]: 'baseline' });
      restricted = await namespace({ [`${P}/enforce`]: 'restricted' });
    });

    const baselineCases: Array<[string, PodSpec, string]> = [
      ['host namespaces', changed((s) => Object.assign(s, { hostPID: true })), 'host namespaces (hostPID=true)'],
      [
        'privileged',
        changed((s) => (sc(s).privileged = true)),
        'privileged (container "c" must not set securityContext.privileged=true)',
      ],
      [
        'capabilities',
        changed((s) => (sc(s).capabilities = { drop: ['ALL'], add: ['SYS_ADMIN'] })),
        'non-default capabilities (container "c" must not include "SYS_ADMIN" in securityContext.capabilities.add)',
      ],
      [
        'hostPath volumes',
        changed((s) => (s.volumes = [{ name: 'h', hostPath: { path: '/etc' } }])),
        'hostPath volumes (volume "h")',
      ],
      [
        'host ports',
        changed((s) => (s.containers[0]!.ports = [{ containerPort: 80, hostPort: 8080 }])),
        'hostPort (container "c" uses hostPort 8080)',
      ],
      [
        'AppArmor',
        changed((s) => (sc(s).appArmorProfile = { type: 'Unconfined' })),
        'forbidden AppArmor profile (container "c" must not set AppArmor profile type to "Unconfined")',
      ],
      [
        'SELinux',
        changed((s) => (s.securityContext!.seLinuxOptions = { type: 'spc_t' })),
        'seLinuxOptions (pod set forbidden securityContext.seLinuxOptions: type "spc_t")',
      ],
      [
        '/proc mount',
        changed((s) => (sc(s).procMount = 'Unmasked')),
        'procMount (container "c" must not set securityContext.procMount to "Unmasked")',
      ],
      [
        'seccomp',
        changed((s) => (s.securityContext!.seccompProfile = { type: 'Unconfined' })),
        'seccompProfile (pod must not set securityContext.seccompProfile.type to "Unconfined")',
      ],
      [
        'sysctls',
        changed((s) => (s.securityContext!.sysctls = [{ name: 'kernel.msgmax', value: '65536' }])),
        'forbidden sysctls (kernel.msgmax)',
      ],
      [
        'Windows host process',
        changed((s) => (sc(s).windowsOptions = { hostProcess: true })),
        'hostProcess (container "c" must not set securityContext.windowsOptions.hostProcess=true)',
      ],
    ];
    it.each(baselineCases)('baseline: %s', async (_name, spec, detail) => {
      const r = await createPod(baseline, spec, { name: 'bad' });
      expect(r.status).toBe(403);
      expect(r.json()).toMatchObject({
        kind: 'Status',
        reason: 'Forbidden',
        code: 403,
        details: { name: 'bad', kind: 'pods' },
        message: `pods "bad" is forbidden: violates PodSecurity "baseline:latest": ${detail}`,
      });
    });

    const restrictedCases: Array<[string, PodSpec, string]> = [
      [
        'privilege escalation',
        changed((s) => (sc(s).allowPrivilegeEscalation = true)),
        'allowPrivilegeEscalation != false (container "c" must set securityContext.allowPrivilegeEscalation=false)',
      ],
      [
        'capabilities dropped',
        changed((s) => (sc(s).capabilities = { add: ['NET_BIND_SERVICE'] })),
        'unrestricted capabilities (container "c" must set securityContext.capabilities.drop=["ALL"])',
      ],
      [
        'volume types',
        changed((s) => (s.volumes = [{ name: 'n', nfs: { server: 'nfs.example', path: '/' } }])),
        'restricted volume types (volume "n" uses restricted volume type "nfs")',
      ],
      [
        'running as non-root',
        changed((s) => (s.securityContext!.runAsNonRoot = false)),
        'runAsNonRoot != true (pod must not set securityContext.runAsNonRoot=false)',
      ],
      [
        'running as non-root user',
        changed((s) => (sc(s).runAsUser = 0)),
        'runAsUser=0 (container "c" must not set runAsUser=0)',
      ],
      [
        'seccomp profile set',
        changed((s) => delete s.securityContext!.seccompProfile),
        'seccompProfile (pod or container "c" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")',
      ],
    ];
    it.each(restrictedCases)('restricted: %s (baseline admits it)', async (_name, spec, detail) => {
      const r = await createPod(restricted, spec, { name: 'bad' });
      expect(r.status).toBe(403);
      expect(r.json().message).toBe(`pods "bad" is forbidden: violates PodSecurity "restricted:latest": ${detail}`);
      expect((await createPod(baseline, spec)).status).toBe(201);
    });

    it('passing pods: the restricted pod, with allowed volumes, capabilities, sysctls and profiles', async () => {
      const spec = changed((s) => {
        s.volumes = [
          { name: 'e', emptyDir: {} },
          { name: 's', secret: { secretName: 'x' } },
          { name: 'cm', configMap: { name: 'x' } },
        ];
        s.securityContext!.sysctls = [{ name: 'net.ipv4.ip_local_port_range', value: '1024 65535' }];
        sc(s).capabilities = { drop: ['ALL'], add: ['NET_BIND_SERVICE'] };
        sc(s).appArmorProfile = { type: 'RuntimeDefault' };
        sc(s).seLinuxOptions = { type: 'container_t', level: 's0:c1,c2' };
        sc(s).runAsUser = 1000;
      });
      for (const ns of [baseline, restricted]) expect((await createPod(ns, spec)).status).toBe(201);
    });
  });

  it('versions: checks newer than the namespace enforce-version are not applied', async () => {
    const spec = changed((s) => (sc(s).runAsUser = 0));
    const v122 = await namespace({ [`${P}/enforce`]: 'restricted', [`${P}/enforce-version`]: 'v1.22' });
    expect((await createPod(v122, spec)).status).toBe(201);
    const v123 = await namespace({ [`${P}/enforce`]: 'restricted', [`${P}/enforce-version`]: 'v1.23' });
    const r = await createPod(v123, spec, { name: 'root' });
    expect(r.json().message).toBe(
      'pods "root" is forbidden: violates PodSecurity "restricted:v1.23": runAsUser=0 (container "c" must not set runAsUser=0)',
    );
  });

  it('defaults from the configuration file: unlabelled namespaces warn at baseline', async () => {
    const ns = await namespace({});
    const r = await createPod(ns, { hostNetwork: true, containers: [{ name: 'c', image: 'busybox' }] });
    expect(r.status).toBe(201);
    expect(warnings(r)).toEqual(['would violate PodSecurity "baseline:latest": host namespaces (hostNetwork=true)']);
  });

  it('exemptions from the configuration file: namespace, user and runtime class', async () => {
    // The exempt namespace's labels are accepted, with a warning that they are ignored.
    await env.ok(['create', 'namespace', 'exempt-ns']);
    const label = await env.ok(['label', 'namespace', 'exempt-ns', `${P}/enforce=restricted`]);
    expect(label.stderr.trim()).toBe(
      'Warning: namespace "exempt-ns" is exempt from Pod Security, and the policy (enforce=restricted:latest) will be ignored',
    );
    await env.server.client.post('/api/v1/namespaces/exempt-ns/serviceaccounts', { metadata: { name: 'default' } });
    expect((await createPod('exempt-ns', plainPod())).status).toBe(201);

    const ns = await namespace({ [`${P}/enforce`]: 'restricted' });
    expect((await createPod(ns, plainPod())).status).toBe(403);
    expect((await createPod(ns, plainPod(), { token: EXEMPT_TOKEN })).status).toBe(201);
    // The classes exist: the RuntimeClass admission plugin refuses pods that name a missing one.
    for (const handler of ['kata', 'gvisor']) {
      const rc = { apiVersion: 'node.svc.io/v1', kind: 'RuntimeClass', metadata: { name: handler }, handler };
      expect((await env.server.client.post('/apis/node.svc.io/v1/runtimeclasses', rc)).status).toBe(201);
    }
    expect((await createPod(ns, { ...plainPod(), runtimeClassName: 'kata' })).status).toBe(201);
    expect((await createPod(ns, { ...plainPod(), runtimeClassName: 'gvisor' })).status).toBe(403);
  });

  it('workload resources are warned, never refused', async () => {
    const ns = await namespace({ [`${P}/enforce`]: 'restricted' });
    const r = await env.ok(['create', 'deployment', 'web', '--image=busybox', '-n', ns]);
    expect(r.stdout.trim()).toBe('deployment.apps/web created');
    expect(r.stderr.trim()).toBe(
      `Warning: would violate PodSecurity "restricted:latest": ${RESTRICTED_DETAIL.replaceAll('container "c"', 'container "busybox"')}`,
    );
    const rs: Json = {
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      metadata: { name: 'rs' },
      spec: {
        selector: { matchLabels: { app: 'rs' } },
        template: { metadata: { labels: { app: 'rs' } }, spec: restrictedPod() },
      },
    };
    const created = await env.server.client.post(`/apis/apps/v1/namespaces/${ns}/replicasets`, rs);
    expect(created.status).toBe(201);
    expect(warnings(created)).toEqual([]);
  });

  it('namespace labels: a bad value is a 422; raising enforce warns about existing pods', async () => {
    const ns = await namespace({});
    const bad = await env.run(['label', 'namespace', ns, `${P}/enforce=strict`]);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr.trim()).toBe(
      `The Namespace "${ns}" is invalid: metadata.labels[${P}/enforce]: Invalid value: "strict": must be one of privileged, baseline, restricted`,
    );
    for (const name of ['b', 'a']) expect((await createPod(ns, plainPod(), { name })).status).toBe(201);
    expect((await createPod(ns, { hostIPC: true, ...restrictedPod() }, { name: 'ipc' })).status).toBe(201);
    expect((await createPod(ns, restrictedPod(), { name: 'fine' })).status).toBe(201);
    const r = await env.ok(['label', 'namespace', ns, `${P}/enforce=restricted`]);
    expect(r.stderr.trim().split('\n')).toEqual([
      `Warning: existing pods in namespace "${ns}" violate the new PodSecurity enforce level "restricted:latest"`,
      'Warning: a (and 1 other pod): allowPrivilegeEscalation != false, unrestricted capabilities, runAsNonRoot != true, seccompProfile',
      'Warning: ipc: host namespaces',
    ]);
    expect(r.stdout.trim()).toBe(`namespace/${ns} labeled`);
    // Lowering the level checks nothing.
    const lower = await env.ok(['label', '--overwrite', 'namespace', ns, `${P}/enforce=baseline`]);
    expect(lower.stderr).toBe('');
  });
});

describe('--naming=kubernetes', () => {
  beforeAll(async () => {
    env = await startKubectlEnv({ args: ['--naming=kubernetes'] });
  });
  afterAll(async () => {
    await env.stop();
  });

  it('reads the pod-security.kubernetes.io labels', async () => {
    const ns = await namespace({ 'pod-security.kubernetes.io/enforce': 'baseline' });
    const r = await env.run(['run', 'h', '--image=busybox', '--overrides={"spec":{"hostNetwork":true}}', '-n', ns]);
    expect(r.stderr.trim()).toBe(
      'Error from server (Forbidden): pods "h" is forbidden: violates PodSecurity "baseline:latest": host namespaces (hostNetwork=true)',
    );
    const other = await namespace({ [`${P}/enforce`]: 'baseline' });
    expect((await createPod(other, { hostNetwork: true, containers: [{ name: 'c', image: 'busybox' }] })).status).toBe(
      201,
    );
  });
});
