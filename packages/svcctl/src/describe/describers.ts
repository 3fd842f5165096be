import {
  DescribeWriter,
  annotationsMultiline,
  asList,
  asObj,
  formatLabelMap,
  formatLabelSelector,
  labelsMultiline,
  rfc1123z,
  str,
  tolerationsMultiline,
} from './writer.js';
import { describeContainers, describeVolumes } from './containers.js';
import { writePodTemplate } from './pod-template.js';
import { describeEvents } from './events.js';
import { humanAge } from '../commands/get.js';

type Obj = Record<string, unknown>;

/** What a describer gets besides the object: related objects the command fetched. */
export interface DescribeContext {
  events?: Obj[];
  /** The annotation kubectl leaves out (the server's last-applied annotation). */
  skipAnnotations: string[];
  /** Deployments: their old and new ReplicaSets. */
  oldReplicaSets?: Obj[];
  newReplicaSets?: Obj[];
  /** Nodes: the pods on the node that have not terminated, and its Lease. */
  nodePods?: Obj[];
  lease?: Obj;
  /** Why the node's Lease could not be read (kubectl prints `Failed to get lease: ...`). */
  leaseError?: string;
  /** ReplicaSets: the pods they control, or why they could not be listed. */
  controlledPods?: Obj[];
  podsError?: string;
  /** Services: their endpoints, as `ip:port` per port name. */
  endpoints?: Map<string, string>;
  /** Nodes: the role labels (node-role.<domain>/<role> and <domain>/role, from names.ts). */
  nodeRoles?: { prefix: string; label: string };
}

function controllerOf(meta: Obj): string {
  const ref = asList(meta.ownerReferences).find((r) => r.controller === true);
  return ref ? `${str(ref.kind)}/${str(ref.name)}` : '';
}

function qosClass(spec: Obj): string {
  const containers = [...asList(spec.initContainers), ...asList(spec.containers)];
  let any = false;
  let guaranteed = true;
  for (const c of containers) {
    const r = asObj(c.resources);
    const req = asObj(r.requests);
    const lim = asObj(r.limits);
    for (const k of ['cpu', 'memory']) {
      if (req[k] !== undefined || lim[k] !== undefined) any = true;
      if (lim[k] === undefined || (req[k] !== undefined && str(req[k]) !== str(lim[k]))) guaranteed = false;
    }
  }
  if (!any) return 'BestEffort';
  return guaranteed ? 'Guaranteed' : 'Burstable';
}

export function describePod(pod: Obj, c: DescribeContext): string {
  const w = new DescribeWriter();
  const meta = asObj(pod.metadata);
  const spec = asObj(pod.spec);
  const status = asObj(pod.status);
  w.write(0, `Name:\t${str(meta.name)}\n`);
  w.write(0, `Namespace:\t${str(meta.namespace)}\n`);
  if (spec.priority !== undefined) w.write(0, `Priority:\t${str(spec.priority)}\n`);
  if (str(spec.priorityClassName)) w.write(0, `Priority Class Name:\t${str(spec.priorityClassName)}\n`);
  if (str(spec.runtimeClassName)) w.write(0, `Runtime Class Name:\t${str(spec.runtimeClassName)}\n`);
  if (str(spec.serviceAccountName)) w.write(0, `Service Account:\t${str(spec.serviceAccountName)}\n`);
  w.write(0, spec.nodeName ? `Node:\t${str(spec.nodeName)}/${str(status.hostIP)}\n` : 'Node:\t<none>\n');
  if (status.startTime) w.write(0, `Start Time:\t${rfc1123z(status.startTime)}\n`);
  labelsMultiline(w, { title: 'Labels', labels: meta.labels });
  annotationsMultiline(w, { title: 'Annotations', annotations: meta.annotations, skip: c.skipAnnotations });
  if (meta.deletionTimestamp && status.phase !== 'Failed' && status.phase !== 'Succeeded') {
    w.write(0, `Status:\tTerminating (lasts ${humanAge(Date.now() - Date.parse(str(meta.deletionTimestamp)))})\n`);
    w.write(0, `Termination Grace Period:\t${str(meta.deletionGracePeriodSeconds)}s\n`);
  } else w.write(0, `Status:\t${str(status.phase)}\n`);
  if (str(status.reason)) w.write(0, `Reason:\t${str(status.reason)}\n`);
  if (str(status.message)) w.write(0, `Message:\t${str(status.message)}\n`);
  const seccomp = asObj(asObj(spec.securityContext).seccompProfile);
  if (seccomp.type) {
    w.write(0, `SeccompProfile:\t${str(seccomp.type)}\n`);
    if (seccomp.type === 'Localhost') w.write(0, `LocalhostProfile:\t${str(seccomp.localhostProfile)}\n`);
  }
  w.write(0, `IP:\t${str(status.podIP)}\n`);
  const ips = asList(status.podIPs);
  if (ips.length === 0) w.write(0, 'IPs:\t<none>\n');
  else {
    w.write(0, 'IPs:\n');
    for (const ip of ips) w.write(1, `IP:\t${str(ip.ip)}\n`);
  }
  const controlledBy = controllerOf(meta);
  if (controlledBy) w.write(0, `Controlled By:\t${controlledBy}\n`);
  if (str(status.nominatedNodeName)) w.write(0, `NominatedNodeName:\t${str(status.nominatedNodeName)}\n`);
  if (asList(spec.initContainers).length > 0) {
    describeContainers(w, {
      label: 'Init Containers',
      containers: spec.initContainers,
      statuses: status.initContainerStatuses,
      space: '',
      pod,
    });
  }
  describeContainers(w, {
    label: 'Containers',
    containers: spec.containers,
    statuses: status.containerStatuses,
    space: '',
    pod,
  });
  const gates = asList(spec.readinessGates);
  if (gates.length > 0) {
    w.write(0, 'Readiness Gates:\n  Type\tStatus\n');
    for (const g of gates) {
      const cond = asList(status.conditions).find((x) => x.type === g.conditionType);
      w.write(1, `${str(g.conditionType)} \t${cond ? str(cond.status) : '<none>'} \n`);
    }
  }
  const conditions = asList(status.conditions);
  if (conditions.length > 0) {
    w.write(0, 'Conditions:\n  Type\tStatus\n');
    for (const cond of conditions) w.write(1, `${str(cond.type)} \t${str(cond.status)} \n`);
  }
  describeVolumes(w, { volumes: spec.volumes, space: '' });
  w.write(0, `QoS Class:\t${qosClass(spec)}\n`);
  labelsMultiline(w, { title: 'Node-Selectors', labels: spec.nodeSelector });
  tolerationsMultiline(w, { title: 'Tolerations', tolerations: spec.tolerations });
  if (c.events) describeEvents(w, c.events);
  return w.toString();
}

function replicaSets(list: Obj[] | undefined): string {
  const s = (list ?? [])
    .map(
      (rs) =>
        `${str(asObj(rs.metadata).name)} (${str(asObj(rs.status).replicas ?? 0)}/${str(asObj(rs.spec).replicas ?? 0)} replicas created)`,
    )
    .join(', ');
  return s || '<none>';
}

export function describeDeployment(d: Obj, c: DescribeContext): string {
  const w = new DescribeWriter();
  const meta = asObj(d.metadata);
  const spec = asObj(d.spec);
  const status = asObj(d.status);
  w.write(0, `Name:\t${str(meta.name)}\n`);
  w.write(0, `Namespace:\t${str(meta.namespace)}\n`);
  w.write(0, `CreationTimestamp:\t${rfc1123z(meta.creationTimestamp)}\n`);
  labelsMultiline(w, { title: 'Labels', labels: meta.labels });
  annotationsMultiline(w, { title: 'Annotations', annotations: meta.annotations, skip: c.skipAnnotations });
  w.write(0, `Selector:\t${formatLabelSelector(spec.selector)}\n`);
  const n = (v: unknown): string => str(v ?? 0);
  w.write(
    0,
    `Replicas:\t${n(spec.replicas)} desired | ${n(status.updatedReplicas)} updated | ${n(status.replicas)} total | ${n(status.availableReplicas)} available | ${n(status.unavailableReplicas)} unavailable\n`,
  );
  const strategy = asObj(spec.strategy);
  w.write(0, `StrategyType:\t${str(strategy.type)}\n`);
  w.write(0, `MinReadySeconds:\t${n(spec.minReadySeconds)}\n`);
  if (strategy.rollingUpdate) {
    const ru = asObj(strategy.rollingUpdate);
    w.write(0, `RollingUpdateStrategy:\t${str(ru.maxUnavailable)} max unavailable, ${str(ru.maxSurge)} max surge\n`);
  }
  writePodTemplate(w, spec.template);
  const conditions = asList(status.conditions);
  if (conditions.length > 0) {
    w.write(0, 'Conditions:\n  Type\tStatus\tReason\n');
    w.write(1, '----\t------\t------\n');
    for (const cond of conditions) w.write(1, `${str(cond.type)} \t${str(cond.status)}\t${str(cond.reason)}\n`);
  }
  if ((c.oldReplicaSets?.length ?? 0) > 0 || (c.newReplicaSets?.length ?? 0) > 0) {
    w.write(0, `OldReplicaSets:\t${replicaSets(c.oldReplicaSets)}\n`);
    w.write(0, `NewReplicaSet:\t${replicaSets(c.newReplicaSets)}\n`);
  }
  if (c.events) describeEvents(w, c.events);
  return w.toString();
}

export function describeService(svc: Obj, c: DescribeContext): string {
  const w = new DescribeWriter();
  const meta = asObj(svc.metadata);
  const spec = asObj(svc.spec);
  w.write(0, `Name:\t${str(meta.name)}\n`);
  w.write(0, `Namespace:\t${str(meta.namespace)}\n`);
  labelsMultiline(w, { title: 'Labels', labels: meta.labels });
  annotationsMultiline(w, { title: 'Annotations', annotations: meta.annotations, skip: c.skipAnnotations });
  w.write(0, `Selector:\t${formatLabelMap(spec.selector)}\n`);
  w.write(0, `Type:\t${str(spec.type)}\n`);
  if (spec.ipFamilyPolicy) w.write(0, `IP Family Policy:\t${str(spec.ipFamilyPolicy)}\n`);
  const families = (spec.ipFamilies as string[] | undefined) ?? [];
  w.write(0, `IP Families:\t${families.length > 0 ? families.join(',') : '<none>'}\n`);
  w.write(0, `IP:\t${str(spec.clusterIP)}\n`);
  const ips = (spec.clusterIPs as string[] | undefined) ?? [];
  w.write(0, `IPs:\t${ips.length > 0 ? ips.join(',') : '<none>'}\n`);
  const external = (spec.externalIPs as string[] | undefined) ?? [];
  if (external.length > 0) w.write(0, `External IPs:\t${external.join(',')}\n`);
  if (str(spec.loadBalancerIP)) w.write(0, `Desired LoadBalancer IP:\t${str(spec.loadBalancerIP)}\n`);
  if (str(spec.externalName)) w.write(0, `External Name:\t${str(spec.externalName)}\n`);
  const ingress = asList(asObj(asObj(svc.status).loadBalancer).ingress);
  if (ingress.length > 0)
    w.write(0, `LoadBalancer Ingress:\t${ingress.map((i) => str(i.ip) || str(i.hostname)).join(', ')}\n`);
  for (const p of asList(spec.ports)) {
    const name = str(p.name) || '<unset>';
    w.write(0, `Port:\t${name}\t${str(p.port)}/${str(p.protocol)}\n`);
    w.write(0, `TargetPort:\t${str(p.targetPort)}/${str(p.protocol)}\n`);
    if (p.appProtocol) w.write(0, `AppProtocol:\t${str(p.appProtocol)}\n`);
    if (Number(p.nodePort ?? 0) !== 0) w.write(0, `NodePort:\t${name}\t${str(p.nodePort)}/${str(p.protocol)}\n`);
    w.write(0, `Endpoints:\t${c.endpoints?.get(str(p.name)) ?? '<none>'}\n`);
  }
  w.write(0, `Session Affinity:\t${str(spec.sessionAffinity)}\n`);
  if (str(spec.externalTrafficPolicy)) w.write(0, `External Traffic Policy:\t${str(spec.externalTrafficPolicy)}\n`);
  if (spec.internalTrafficPolicy) w.write(0, `Internal Traffic Policy:\t${str(spec.internalTrafficPolicy)}\n`);
  if (Number(spec.healthCheckNodePort ?? 0) !== 0)
    w.write(0, `HealthCheck NodePort:\t${str(spec.healthCheckNodePort)}\n`);
  const ranges = (spec.loadBalancerSourceRanges as string[] | undefined) ?? [];
  if (ranges.length > 0) w.write(0, `LoadBalancer Source Ranges:\t${ranges.join(',')}\n`);
  if (spec.trafficDistribution) w.write(0, `Traffic Distribution:\t${str(spec.trafficDistribution)}\n`);
  if (c.events) describeEvents(w, c.events);
  return w.toString();
}
