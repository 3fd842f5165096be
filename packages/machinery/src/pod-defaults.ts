/** The parts of a container that v1 defaulting touches. */
export interface DefaultableContainer {
  image?: string;
  imagePullPolicy?: string;
  terminationMessagePath?: string;
  terminationMessagePolicy?: string;
  ports?: Array<{ protocol?: string }>;
  resources?: object;
}

/** The parts of a pod spec that v1 defaulting touches. */
export interface DefaultablePodSpec {
  containers?: DefaultableContainer[];
  initContainers?: DefaultableContainer[];
  restartPolicy?: string;
  terminationGracePeriodSeconds?: number;
  dnsPolicy?: string;
  schedulerName?: string;
  securityContext?: object;
  enableServiceLinks?: boolean;
}

function defaultContainer(c: DefaultableContainer): void {
  c.terminationMessagePath ??= '/dev/termination-log';
  c.terminationMessagePolicy ??= 'File';
  if (!c.imagePullPolicy) {
    const last = (c.image ?? '').split('/').pop() ?? '';
    c.imagePullPolicy = !last.includes(':') || last.endsWith(':latest') ? 'Always' : 'IfNotPresent';
  }
  c.resources ??= {};
  for (const p of c.ports ?? []) p.protocol ??= 'TCP';
}

/**
 * Kubernetes' v1 pod-spec defaults for the fields node agents and schedulers read, in place:
 * the API server applies them to API pods and templates, the svclet to static pods.
 */
export function defaultPodSpec(s: DefaultablePodSpec): void {
  s.restartPolicy ??= 'Always';
  s.terminationGracePeriodSeconds ??= 30;
  s.dnsPolicy ??= 'ClusterFirst';
  s.schedulerName ??= 'default-scheduler';
  s.securityContext ??= {};
  s.enableServiceLinks ??= true;
  for (const c of [...(s.containers ?? []), ...(s.initContainers ?? [])]) defaultContainer(c);
}
