import { quantityMilliValue, quantityValue } from '@svc/machinery/quantity';
import { humanAge } from '../commands/get.js';
import {
  DescribeWriter,
  annotationsMultiline,
  asList,
  asObj,
  labelsMultiline,
  rfc1123z,
  str,
  taintsMultiline,
} from './writer.js';
import { describeEvents } from './events.js';
import type { DescribeContext } from './describers.js';

type Obj = Record<string, unknown>;

/** A sum of quantities in Kubernetes' canonical form: CPU in cores or millicores, memory with a binary suffix. */
function formatQuantity(o: { milli: number; binary: boolean }): string {
  if (o.milli === 0) return '0';
  if (!o.binary) return o.milli % 1000 === 0 ? String(o.milli / 1000) : `${o.milli}m`;
  const bytes = o.milli / 1000;
  for (const [suffix, size] of [
    ['Ei', 2 ** 60],
    ['Pi', 2 ** 50],
    ['Ti', 2 ** 40],
    ['Gi', 2 ** 30],
    ['Mi', 2 ** 20],
    ['Ki', 2 ** 10],
  ] as const) {
    if (bytes >= size && bytes % size === 0) return `${bytes / size}${suffix}`;
  }
  return String(bytes);
}

/** Whether a quantity text uses binary suffixes (memory, storage): `128Mi`. */
function isBinary(q: string): boolean {
  return /[KMGTPE]i$/.test(q);
}

/** A pod's requests or limits per resource, in millis (PodRequests: containers summed, init containers' maximum, overhead). */
function podResources(pod: Obj, which: 'requests' | 'limits'): Map<string, { milli: number; binary: boolean }> {
  const out = new Map<string, { milli: number; binary: boolean }>();
  const add = (m: Map<string, { milli: number; binary: boolean }>, k: string, q: string): void => {
    const cur = m.get(k) ?? { milli: 0, binary: isBinary(q) };
    m.set(k, { milli: cur.milli + quantityMilliValue(q), binary: cur.binary || isBinary(q) });
  };
  const spec = asObj(pod.spec);
  for (const c of asList(spec.containers))
    for (const [k, q] of Object.entries(asObj(asObj(c.resources)[which]))) add(out, k, str(q));
  for (const c of asList(spec.initContainers)) {
    for (const [k, q] of Object.entries(asObj(asObj(c.resources)[which]))) {
      const v = quantityMilliValue(str(q));
      const cur = out.get(k);
      if (!cur || v > cur.milli) out.set(k, { milli: v, binary: isBinary(str(q)) });
    }
  }
  for (const [k, q] of Object.entries(asObj(spec.overhead)))
    if (out.has(k) || which === 'requests') add(out, k, str(q));
  return out;
}

function percent(part: number, whole: number): number {
  return whole === 0 ? 0 : Math.trunc((part / whole) * 100);
}

/**
 * A pod row's share of the node: kubectl divides without a guard, so a node that reports no
 * allocatable prints Go's int64 conversion of NaN or Inf (the smallest int64), as here.
 */
function podPercent(part: number, whole: number): string {
  return whole === 0 ? '-9223372036854775808' : String(Math.trunc((part / whole) * 100));
}

function nodeResources(w: DescribeWriter, node: Obj, pods: Obj[]): void {
  w.write(0, `Non-terminated Pods:\t(${pods.length} in total)\n`);
  w.write(1, 'Namespace\tName\t\tCPU Requests\tCPU Limits\tMemory Requests\tMemory Limits\tAge\n');
  w.write(1, '---------\t----\t\t------------\t----------\t---------------\t-------------\t---\n');
  const st = asObj(node.status);
  const allocatable = Object.keys(asObj(st.allocatable)).length > 0 ? asObj(st.allocatable) : asObj(st.capacity);
  const allocCpu = quantityMilliValue(str(allocatable.cpu ?? '0'));
  const allocMem = quantityValue(str(allocatable.memory ?? '0'));
  const allocEph = quantityValue(str(allocatable['ephemeral-storage'] ?? '0'));
  const zero = { milli: 0, binary: false };
  const zeroBin = { milli: 0, binary: true };
  const totals = {
    requests: new Map<string, { milli: number; binary: boolean }>(),
    limits: new Map<string, { milli: number; binary: boolean }>(),
  };
  for (const pod of pods) {
    const req = podResources(pod, 'requests');
    const lim = podResources(pod, 'limits');
    for (const [which, m] of [
      ['requests', req],
      ['limits', lim],
    ] as const) {
      for (const [k, v] of m) {
        const cur = totals[which].get(k) ?? { milli: 0, binary: v.binary };
        totals[which].set(k, { milli: cur.milli + v.milli, binary: cur.binary || v.binary });
      }
    }
    const cpuReq = req.get('cpu') ?? zero;
    const cpuLim = lim.get('cpu') ?? zero;
    const memReq = req.get('memory') ?? zeroBin;
    const memLim = lim.get('memory') ?? zeroBin;
    const meta = asObj(pod.metadata);
    w.write(
      1,
      `${str(meta.namespace)}\t${str(meta.name)}\t\t${formatQuantity(cpuReq)} (${podPercent(cpuReq.milli, allocCpu)}%)\t${formatQuantity(cpuLim)} (${podPercent(cpuLim.milli, allocCpu)}%)\t${formatQuantity(memReq)} (${podPercent(memReq.milli / 1000, allocMem)}%)\t${formatQuantity(memLim)} (${podPercent(memLim.milli / 1000, allocMem)}%)\t${humanAge(Date.now() - Date.parse(str(meta.creationTimestamp)))}\n`,
    );
  }
  w.write(0, 'Allocated resources:\n  (Total limits may be over 100 percent, i.e., overcommitted.)\n');
  w.write(1, 'Resource\tRequests\tLimits\n');
  w.write(1, '--------\t--------\t------\n');
  const row = (name: string, o: { whole: number; binary: boolean; milliWhole: boolean }): void => {
    const r = totals.requests.get(name) ?? { milli: 0, binary: o.binary };
    const l = totals.limits.get(name) ?? { milli: 0, binary: o.binary };
    const part = (x: number): number => (o.milliWhole ? x : x / 1000);
    w.write(
      1,
      `${name}\t${formatQuantity(r)} (${percent(part(r.milli), o.whole)}%)\t${formatQuantity(l)} (${percent(part(l.milli), o.whole)}%)\n`,
    );
  };
  row('cpu', { whole: allocCpu, binary: false, milliWhole: true });
  row('memory', { whole: allocMem, binary: true, milliWhole: false });
  row('ephemeral-storage', { whole: allocEph, binary: true, milliWhole: false });
  const standard = new Set(['cpu', 'memory', 'ephemeral-storage', 'storage', 'pods']);
  for (const k of Object.keys(allocatable)
    .filter((k) => k.startsWith('hugepages-'))
    .sort()) {
    row(k, { whole: quantityValue(str(allocatable[k])), binary: true, milliWhole: false });
  }
  for (const k of Object.keys(allocatable)
    .filter(
      (k) => !standard.has(k) && !k.startsWith('hugepages-') && !k.startsWith('requests.') && !k.startsWith('limits.'),
    )
    .sort()) {
    w.write(
      1,
      `${k}\t${formatQuantity(totals.requests.get(k) ?? zero)}\t${formatQuantity(totals.limits.get(k) ?? zero)}\n`,
    );
  }
}

export function describeNode(node: Obj, c: DescribeContext): string {
  const w = new DescribeWriter();
  const meta = asObj(node.metadata);
  const spec = asObj(node.spec);
  const st = asObj(node.status);
  w.write(0, `Name:\t${str(meta.name)}\n`);
  const roles = new Set<string>();
  const r = c.nodeRoles;
  for (const [k, v] of Object.entries(asObj(meta.labels))) {
    if (r && k.startsWith(r.prefix) && k.length > r.prefix.length) roles.add(k.slice(r.prefix.length));
    else if (r && k === r.label && str(v)) roles.add(str(v));
  }
  w.write(0, `Roles:\t${roles.size > 0 ? [...roles].sort().join(',') : '<none>'}\n`);
  labelsMultiline(w, { title: 'Labels', labels: meta.labels });
  annotationsMultiline(w, { title: 'Annotations', annotations: meta.annotations, skip: c.skipAnnotations });
  w.write(0, `CreationTimestamp:\t${rfc1123z(meta.creationTimestamp)}\n`);
  taintsMultiline(w, { title: 'Taints', taints: spec.taints });
  w.write(0, `Unschedulable:\t${spec.unschedulable === true}\n`);
  if (c.leaseError !== undefined) w.write(0, `Lease:\tFailed to get lease: ${c.leaseError}\n`);
  else if (c.lease !== undefined) {
    const ls = asObj(asObj(c.lease).spec);
    w.write(0, 'Lease:\n');
    w.write(1, `HolderIdentity:\t${str(ls.holderIdentity) || '<unset>'}\n`);
    w.write(1, `AcquireTime:\t${ls.acquireTime ? rfc1123z(ls.acquireTime) : '<unset>'}\n`);
    w.write(1, `RenewTime:\t${ls.renewTime ? rfc1123z(ls.renewTime) : '<unset>'}\n`);
  }
  const conditions = asList(st.conditions);
  if (conditions.length > 0) {
    w.write(0, 'Conditions:\n  Type\tStatus\tLastHeartbeatTime\tLastTransitionTime\tReason\tMessage\n');
    w.write(1, '----\t------\t-----------------\t------------------\t------\t-------\n');
    for (const cond of conditions) {
      w.write(
        1,
        `${str(cond.type)} \t${str(cond.status)} \t${rfc1123z(cond.lastHeartbeatTime)} \t${rfc1123z(cond.lastTransitionTime)} \t${str(cond.reason)} \t${str(cond.message)}\n`,
      );
    }
  }
  w.write(0, 'Addresses:\n');
  for (const a of asList(st.addresses)) w.write(1, `${str(a.type)}:\t${str(a.address)}\n`);
  for (const [title, key] of [
    ['Capacity', 'capacity'],
    ['Allocatable', 'allocatable'],
  ] as const) {
    const list = asObj(st[key]);
    if (Object.keys(list).length === 0) continue;
    w.write(0, `${title}:\n`);
    for (const k of Object.keys(list).sort()) w.write(0, `  ${k}:\t${str(list[k])}\n`);
  }
  const info = asObj(st.nodeInfo);
  w.write(0, 'System Info:\n');
  for (const [label, key] of [
    ['Machine ID', 'machineID'],
    ['System UUID', 'systemUUID'],
    ['Boot ID', 'bootID'],
    ['Kernel Version', 'kernelVersion'],
    ['OS Image', 'osImage'],
    ['Operating System', 'operatingSystem'],
    ['Architecture', 'architecture'],
    ['Container Runtime Version', 'containerRuntimeVersion'],
    ['Kubelet Version', 'kubeletVersion'],
    ['Kube-Proxy Version', 'kubeProxyVersion'],
  ] as const) {
    w.write(0, `  ${label}:\t${str(info[key])}\n`);
  }
  if (str(spec.podCIDR)) w.write(0, `PodCIDR:\t${str(spec.podCIDR)}\n`);
  const cidrs = (spec.podCIDRs as string[] | undefined) ?? [];
  if (cidrs.length > 0) w.write(0, `PodCIDRs:\t${cidrs.join(',')}\n`);
  if (str(spec.providerID)) w.write(0, `ProviderID:\t${str(spec.providerID)}\n`);
  if (c.nodePods) nodeResources(w, node, c.nodePods);
  else w.write(0, 'Pods:\tnot authorized\n');
  if (c.events) describeEvents(w, c.events);
  return w.toString();
}
