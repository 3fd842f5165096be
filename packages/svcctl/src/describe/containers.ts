import { type DescribeWriter, asList, asObj, rfc1123z, str } from './writer.js';

type Obj = Record<string, unknown>;

function ports(list: Obj[], field: 'containerPort' | 'hostPort'): string {
  return list
    .map((p) => {
      const s = `${str(p[field] ?? 0)}/${str(p.protocol)}`;
      return p.name ? `${s} (${str(p.name)})` : s;
    })
    .join(', ');
}

/** An int-or-string as Go's intstr prints it. */
function intOrString(v: unknown): string {
  return str(v);
}

/**
 * kubectl prints a projected source's `optional` pointer with %v: `<nil>` when unset (set, it
 * prints an address; we print the value).
 */
function optionalPointer(v: unknown): string {
  return v === undefined || v === null ? '<nil>' : String(v);
}

/** kubectl's DescribeProbe. */
export function describeProbe(p: Obj): string {
  const attrs = `delay=${str(p.initialDelaySeconds ?? 0)}s timeout=${str(p.timeoutSeconds ?? 0)}s period=${str(p.periodSeconds ?? 0)}s #success=${str(p.successThreshold ?? 0)} #failure=${str(p.failureThreshold ?? 0)}`;
  if (p.exec) return `exec [${(asObj(p.exec).command as string[] | undefined)?.join(' ') ?? ''}] ${attrs}`;
  if (p.httpGet) {
    const h = asObj(p.httpGet);
    const port = intOrString(h.port);
    const host = str(h.host);
    const hostPort = port ? (host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`) : host;
    // Go's url.URL: no `scheme:` when the scheme is empty.
    const scheme = str(h.scheme).toLowerCase();
    return `http-get ${scheme ? `${scheme}:` : ''}//${hostPort}${str(h.path)} ${attrs}`;
  }
  if (p.tcpSocket) {
    const t = asObj(p.tcpSocket);
    return `tcp-socket ${str(t.host)}:${intOrString(t.port)} ${attrs}`;
  }
  if (p.grpc) {
    const g = asObj(p.grpc);
    return `grpc <pod>:${str(g.port)} ${str(g.service)} ${attrs}`;
  }
  return `unknown ${attrs}`;
}

function describeState(w: DescribeWriter, name: string, state: Obj): void {
  if (state.running) {
    w.write(2, `${name}:\tRunning\n`);
    w.write(3, `Started:\t${rfc1123z(asObj(state.running).startedAt)}\n`);
  } else if (state.waiting) {
    w.write(2, `${name}:\tWaiting\n`);
    const r = str(asObj(state.waiting).reason);
    if (r) w.write(3, `Reason:\t${r}\n`);
  } else if (state.terminated) {
    const t = asObj(state.terminated);
    w.write(2, `${name}:\tTerminated\n`);
    if (str(t.reason)) w.write(3, `Reason:\t${str(t.reason)}\n`);
    if (str(t.message)) w.write(3, `Message:\t${str(t.message)}\n`);
    w.write(3, `Exit Code:\t${str(t.exitCode ?? 0)}\n`);
    if (Number(t.signal ?? 0) > 0) w.write(3, `Signal:\t${str(t.signal)}\n`);
    w.write(3, `Started:\t${rfc1123z(t.startedAt)}\n`);
    w.write(3, `Finished:\t${rfc1123z(t.finishedAt)}\n`);
  } else w.write(2, `${name}:\tWaiting\n`);
}

function describeResources(w: DescribeWriter, resources: Obj, level: number): void {
  for (const [title, key] of [
    ['Limits', 'limits'],
    ['Requests', 'requests'],
  ] as const) {
    const list = asObj(resources[key]);
    const names = Object.keys(list).sort();
    if (names.length > 0) w.write(level, `${title}:\n`);
    for (const n of names) w.write(level + 1, `${n}:\t${str(list[n])}\n`);
  }
}

function describeEnv(w: DescribeWriter, c: Obj, pod?: Obj): void {
  const env = asList(c.env);
  w.write(2, `Environment:${env.length === 0 ? '\t<none>' : ''}\n`);
  for (const e of env) {
    const from = asObj(e.valueFrom);
    if (!e.valueFrom) {
      str(e.value)
        .split('\n')
        .forEach((s, i) => w.write(3, i === 0 ? `${str(e.name)}:\t${s}\n` : `\t${s}\n`));
    } else if (from.fieldRef) {
      const f = asObj(from.fieldRef);
      const value = pod ? fieldValue(pod, str(f.fieldPath)) : '';
      w.write(3, `${str(e.name)}:\t${value} (${str(f.apiVersion)}:${str(f.fieldPath)})\n`);
    } else if (from.resourceFieldRef) {
      w.write(3, `${str(e.name)}:\t (${str(asObj(from.resourceFieldRef).resource)})\n`);
    } else if (from.secretKeyRef) {
      const s = asObj(from.secretKeyRef);
      w.write(
        3,
        `${str(e.name)}:\t<set to the key '${str(s.key)}' in secret '${str(s.name)}'>\tOptional: ${s.optional === true}\n`,
      );
    } else if (from.configMapKeyRef) {
      const s = asObj(from.configMapKeyRef);
      w.write(
        3,
        `${str(e.name)}:\t<set to the key '${str(s.key)}' of config map '${str(s.name)}'>\tOptional: ${s.optional === true}\n`,
      );
    }
  }
}

/** The value of a downward-API field path of a pod (`metadata.name`, `metadata.labels['a']`, `status.podIP`). */
function fieldValue(pod: Obj, path: string): string {
  const m = /^metadata\.(labels|annotations)\['(.*)'\]$/.exec(path);
  if (m) return str(asObj(asObj(pod.metadata)[m[1] ?? ''])[m[2] ?? '']);
  let cur: unknown = pod;
  for (const part of path.split('.')) cur = asObj(cur)[part];
  return str(cur);
}

/** kubectl's describeContainers: one block per container, with its status when the pod has one. */
export function describeContainers(
  w: DescribeWriter,
  o: { label: string; containers: unknown; statuses?: unknown; space: string; pod?: Obj },
): void {
  const containers = asList(o.containers);
  const statuses = new Map(asList(o.statuses).map((s) => [str(s.name), s]));
  w.write(0, `${o.space}${o.label}:${containers.length === 0 ? ' <none>' : ''}\n`);
  for (const c of containers) {
    const status = statuses.get(str(c.name));
    w.write(1, `${o.space ? ' ' : ''}${str(c.name)}:\n`);
    if (status) w.write(2, `Container ID:\t${str(status.containerID)}\n`);
    w.write(2, `Image:\t${str(c.image)}\n`);
    if (status) w.write(2, `Image ID:\t${str(status.imageID)}\n`);
    const p = ports(asList(c.ports), 'containerPort');
    w.write(2, p.includes(',') ? `Ports:\t${p}\n` : `Port:\t${p || '<none>'}\n`);
    const hp = ports(asList(c.ports), 'hostPort');
    w.write(2, hp.includes(',') ? `Host Ports:\t${hp}\n` : `Host Port:\t${hp || '<none>'}\n`);
    const seccomp = asObj(asObj(c.securityContext).seccompProfile);
    if (seccomp.type) {
      w.write(2, `SeccompProfile:\t${str(seccomp.type)}\n`);
      if (seccomp.type === 'Localhost') w.write(3, `LocalhostProfile:\t${str(seccomp.localhostProfile)}\n`);
    }
    for (const [title, key] of [
      ['Command', 'command'],
      ['Args', 'args'],
    ] as const) {
      const list = (c[key] as string[] | undefined) ?? [];
      if (list.length === 0) continue;
      w.write(2, `${title}:\n`);
      for (const item of list) for (const s of item.split('\n')) w.write(3, `${s}\n`);
    }
    if (status) {
      describeState(w, 'State', asObj(status.state));
      if (asObj(status.lastState).terminated) describeState(w, 'Last State', asObj(status.lastState));
      w.write(2, `Ready:\t${status.ready === true ? 'True' : 'False'}\n`);
      w.write(2, `Restart Count:\t${str(status.restartCount ?? 0)}\n`);
    }
    describeResources(w, asObj(c.resources), 2);
    for (const [title, key] of [
      ['Liveness', 'livenessProbe'],
      ['Readiness', 'readinessProbe'],
      ['Startup', 'startupProbe'],
    ] as const) {
      if (c[key]) w.write(2, `${title}:\t${describeProbe(asObj(c[key]))}\n`);
    }
    const envFrom = asList(c.envFrom);
    if (envFrom.length > 0) {
      w.write(2, 'Environment Variables from:\n');
      for (const e of envFrom) {
        const ref = e.configMapRef ? asObj(e.configMapRef) : asObj(e.secretRef);
        const kind = e.configMapRef ? 'ConfigMap' : e.secretRef ? 'Secret' : '';
        const prefix = str(e.prefix);
        w.write(
          3,
          `${str(ref.name)}\t${kind}${prefix ? ` with prefix '${prefix}'` : ''}\tOptional: ${ref.optional === true}\n`,
        );
      }
    }
    describeEnv(w, c, o.pod);
    const mounts = [...asList(c.volumeMounts)].sort((a, b) => (str(a.mountPath) < str(b.mountPath) ? -1 : 1));
    w.write(2, `Mounts:${mounts.length === 0 ? '\t<none>' : ''}\n`);
    for (const m of mounts) {
      const flags = [m.readOnly ? 'ro' : 'rw'];
      if (str(m.subPath)) flags.push(`path=${JSON.stringify(str(m.subPath))}`);
      w.write(3, `${str(m.mountPath)} from ${str(m.name)} (${flags.join(',')})\n`);
    }
    const devices = asList(c.volumeDevices);
    if (devices.length > 0) {
      w.write(2, `Devices:${mounts.length === 0 ? '\t<none>' : ''}\n`);
      for (const d of devices) w.write(3, `${str(d.devicePath)} from ${str(d.name)}\n`);
    }
  }
}

/** kubectl's describeVolumes, for the volume sources svc runs (others print their type only). */
export function describeVolumes(w: DescribeWriter, o: { volumes: unknown; space: string }): void {
  const volumes = asList(o.volumes);
  if (volumes.length === 0) {
    w.write(0, `${o.space}Volumes:\t<none>\n`);
    return;
  }
  w.write(0, `${o.space}Volumes:\n`);
  for (const v of volumes) {
    w.write(1, `${o.space ? ' ' : ''}${str(v.name)}:\n`);
    if (v.hostPath) {
      const h = asObj(v.hostPath);
      w.write(
        2,
        `Type:\tHostPath (bare host directory volume)\n    Path:\t${str(h.path)}\n    HostPathType:\t${str(h.type) || '<none>'}\n`,
      );
    } else if (v.emptyDir) {
      const e = asObj(v.emptyDir);
      const size = e.sizeLimit !== undefined && str(e.sizeLimit) !== '0' ? str(e.sizeLimit) : '<unset>';
      w.write(
        2,
        `Type:\tEmptyDir (a temporary directory that shares a pod's lifetime)\n    Medium:\t${str(e.medium)}\n    SizeLimit:\t${size}\n`,
      );
    } else if (v.secret) {
      const s = asObj(v.secret);
      w.write(
        2,
        `Type:\tSecret (a volume populated by a Secret)\n    SecretName:\t${str(s.secretName)}\n    Optional:\t${s.optional === true}\n`,
      );
    } else if (v.configMap) {
      const c = asObj(v.configMap);
      w.write(
        2,
        `Type:\tConfigMap (a volume populated by a ConfigMap)\n    Name:\t${str(c.name)}\n    Optional:\t${c.optional === true}\n`,
      );
    } else if (v.persistentVolumeClaim) {
      const c = asObj(v.persistentVolumeClaim);
      w.write(
        2,
        `Type:\tPersistentVolumeClaim (a reference to a PersistentVolumeClaim in the same namespace)\n    ClaimName:\t${str(c.claimName)}\n    ReadOnly:\t${c.readOnly === true}\n`,
      );
    } else if (v.projected) {
      w.write(2, 'Type:\tProjected (a volume that contains injected data from multiple sources)\n');
      for (const src of asList(asObj(v.projected).sources)) {
        if (src.secret) {
          const s = asObj(src.secret);
          w.write(2, `SecretName:\t${str(s.name)}\n    SecretOptionalName:\t${optionalPointer(s.optional)}\n`);
        } else if (src.downwardAPI) w.write(2, 'DownwardAPI:\ttrue\n');
        else if (src.configMap) {
          const c = asObj(src.configMap);
          w.write(2, `ConfigMapName:\t${str(c.name)}\n    ConfigMapOptional:\t${optionalPointer(c.optional)}\n`);
        } else if (src.serviceAccountToken) {
          w.write(2, `TokenExpirationSeconds:\t${str(asObj(src.serviceAccountToken).expirationSeconds)}\n`);
        }
      }
    } else if (v.downwardAPI) {
      w.write(2, 'Type:\tDownwardAPI (a volume populated by information about the pod)\n    Items:\n');
      for (const item of asList(asObj(v.downwardAPI).items)) {
        const f = asObj(item.fieldRef);
        const r = asObj(item.resourceFieldRef);
        if (item.fieldRef) w.write(3, `${str(f.fieldPath)} -> ${str(item.path)}\n`);
        if (item.resourceFieldRef) w.write(3, `${str(r.resource)} -> ${str(item.path)}\n`);
      }
    } else w.write(1, '<unknown>\n');
  }
}
