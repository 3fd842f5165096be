import { isIP } from 'node:net';
import { fieldErrors, internalError, invalid, type ApiObject, type FieldError } from '@svc/api';
import { clone, deepEqual } from './object-utils.js';
import { keepAllocated } from './strategies/service.js';
import type { ClusterIpRange, NodePortRange } from './service-allocator.js';
import {
  GenericStore,
  type DeleteParams,
  type DeleteResult,
  type StoreOptions,
  type UpdateParams,
  type WriteParams,
} from './store.js';

/** The ranges Services take their addresses and node ports from (`--service-*-range`). */
export interface ServiceAllocation {
  ips: ClusterIpRange;
  nodePorts: NodePortRange;
}

interface Port {
  nodePort?: number;
}
interface Spec {
  type?: string;
  clusterIP?: string;
  clusterIPs?: string[];
  ipFamilies?: string[];
  ipFamilyPolicy?: string;
  selector?: Record<string, string>;
  ports?: Port[];
  internalTrafficPolicy?: string;
  externalTrafficPolicy?: string;
  allocateLoadBalancerNodePorts?: boolean;
}

/** What one create took, to give back when the write fails. */
interface Taken {
  ip?: number;
  ports: number[];
}

const needsNodePorts = (type: string): boolean => type === 'NodePort' || type === 'LoadBalancer';
const typeOf = (s: Spec): string => s.type ?? 'ClusterIP';
const addressOf = (s: Spec): string | undefined => s.clusterIPs?.[0] ?? s.clusterIP;
const takesNodePorts = (s: Spec): boolean =>
  needsNodePorts(typeOf(s)) && !(typeOf(s) === 'LoadBalancer' && s.allocateLoadBalancerNodePorts === false);

/**
 * Kubernetes' dropTypeDependentFields: a type change that leaves the fields of the old type as
 * they were clears them (to ExternalName: the address and its families; to a type without node
 * ports: the node ports; away from LoadBalancer: allocateLoadBalancerNodePorts; to ClusterIP or
 * ExternalName: externalTrafficPolicy), so `kubectl edit` of the type alone works.
 */
function dropTypeDependentFields(s: Spec, old: Spec): void {
  if (typeOf(s) === typeOf(old)) return;
  if (typeOf(s) === 'ExternalName' && addressOf(s) === addressOf(old) && deepEqual(s.clusterIPs, old.clusterIPs)) {
    delete s.clusterIP;
    delete s.clusterIPs;
    if (deepEqual(s.ipFamilies, old.ipFamilies)) delete s.ipFamilies;
    if (s.ipFamilyPolicy === old.ipFamilyPolicy) delete s.ipFamilyPolicy;
  }
  const ports = s.ports ?? [];
  const oldPorts = old.ports ?? [];
  if (
    !needsNodePorts(typeOf(s)) &&
    ports.every((p, i) => p.nodePort === undefined || p.nodePort === oldPorts[i]?.nodePort)
  )
    for (const p of ports) delete p.nodePort;
  if (typeOf(s) !== 'LoadBalancer' && s.allocateLoadBalancerNodePorts === old.allocateLoadBalancerNodePorts)
    delete s.allocateLoadBalancerNodePorts;
  if (
    (typeOf(s) === 'ClusterIP' || typeOf(s) === 'ExternalName') &&
    s.externalTrafficPolicy === old.externalTrafficPolicy
  )
    delete s.externalTrafficPolicy;
}

/**
 * Services' store: Kubernetes' service REST around the generic one. A create takes its ClusterIP
 * (`spec.clusterIP(s)`, `ipFamilies`, `ipFamilyPolicy` defaulted) and node ports from the
 * ranges before the object is written, and gives them back when the write fails; a delete gives
 * them back once the object is gone. A dry run checks without taking.
 */
export class ServiceStore extends GenericStore {
  constructor(
    opts: StoreOptions,
    private readonly alloc: ServiceAllocation,
  ) {
    super(opts);
  }

  override async create(namespace: string, input: ApiObject, w: WriteParams): Promise<ApiObject> {
    const obj = clone(input);
    const dryRun = w.ctx.dryRun === true;
    const taken: Taken = { ports: [] };
    try {
      await this.allocate(obj, { dryRun, taken });
      return await super.create(namespace, obj, w);
    } catch (e) {
      if (!dryRun) await this.release(taken);
      throw e;
    }
  }

  /**
   * Kubernetes' allocation on update: a type change drops the old type's fields it left as they
   * were, keeps what the server allocated (patchAllocatedValues); a Service that had no address
   * (ExternalName) gets one as on create, one that now needs node ports gets those it does not
   * hold yet (requested ones honoured or refused as on create). Once the update is written, the
   * address and node ports the Service no longer has are given back; a failed update gives back
   * what it took (also on each retry of the read-modify-write).
   */
  override async update(
    namespace: string,
    name: string,
    p: UpdateParams,
  ): Promise<{ object: ApiObject; created: boolean }> {
    if (p.subresource) return super.update(namespace, name, p);
    const dryRun = p.ctx.dryRun === true;
    let taken: Taken = { ports: [] };
    let old: ApiObject | undefined;
    const updater = async (current: ApiObject): Promise<ApiObject> => {
      if (!dryRun) await this.release(taken);
      taken = { ports: [] };
      const desired = await p.updater(current);
      old = current;
      await this.allocateOnUpdate(desired, current, { dryRun, taken });
      return desired;
    };
    let result: { object: ApiObject; created: boolean };
    try {
      result = await super.update(namespace, name, { ...p, updater });
    } catch (e) {
      if (!dryRun) await this.release(taken);
      throw e;
    }
    if (!dryRun && old && !result.created) await this.releaseDropped(old, result.object);
    return result;
  }

  private async allocateOnUpdate(desired: ApiObject, current: ApiObject, o: { dryRun: boolean; taken: Taken }) {
    const s = (desired.spec ??= {}) as Spec;
    const was = (current.spec ?? {}) as Spec;
    dropTypeDependentFields(s, was);
    keepAllocated(s, was);
    if (typeOf(s) === 'ExternalName') return;
    const oldAddress = typeOf(was) === 'ExternalName' ? undefined : addressOf(was);
    if (!oldAddress) {
      await this.allocate(desired, o);
      return;
    }
    if (!takesNodePorts(s)) return;
    s.externalTrafficPolicy ??= 'Cluster';
    const held = new Set(takesNodePorts(was) ? (was.ports ?? []).map((p) => p.nodePort) : []);
    await this.allocatePorts(desired, { ...o, skip: (port) => held.has(port) });
  }

  /** After an update: gives back the old address and node ports the Service no longer holds. */
  private async releaseDropped(old: ApiObject, now: ApiObject): Promise<void> {
    const was = (old.spec ?? {}) as Spec;
    const is = (now.spec ?? {}) as Spec;
    const taken: Taken = { ports: [] };
    const ip = addressOf(was);
    if (ip && ip !== 'None' && addressOf(is) !== ip) taken.ip = this.alloc.ips.indexOf(ip);
    const kept = new Set((is.ports ?? []).map((p) => p.nodePort));
    for (const p of was.ports ?? []) {
      if (p.nodePort === undefined || kept.has(p.nodePort)) continue;
      const i = this.alloc.nodePorts.indexOf(p.nodePort);
      if (i !== undefined) taken.ports.push(i);
    }
    await this.release(taken);
  }

  override async delete(namespace: string, name: string, p: DeleteParams): Promise<DeleteResult> {
    const result = await super.delete(namespace, name, p);
    if (result.deleted && !p.ctx.dryRun) await this.releaseOf(result.object);
    return result;
  }

  /** Gives back the address and node ports a deleted Service held. */
  private async releaseOf(obj: ApiObject): Promise<void> {
    const s = (obj.spec ?? {}) as Spec;
    const taken: Taken = { ports: [] };
    const ip = s.clusterIPs?.[0] ?? s.clusterIP;
    if (ip && ip !== 'None') taken.ip = this.alloc.ips.indexOf(ip);
    for (const p of s.ports ?? []) {
      const i = p.nodePort === undefined ? undefined : this.alloc.nodePorts.indexOf(p.nodePort);
      if (i !== undefined) taken.ports.push(i);
    }
    await this.release(taken);
  }

  private async release(taken: Taken): Promise<void> {
    if (taken.ip !== undefined) await this.alloc.ips.bitmap.release(taken.ip);
    for (const i of taken.ports) await this.alloc.nodePorts.bitmap.release(i);
  }

  private fail(obj: ApiObject, errs: FieldError[]): never {
    throw invalid({ group: '', kind: 'Service' }, obj.metadata.name ?? obj.metadata.generateName ?? '', errs);
  }

  private async allocate(obj: ApiObject, o: { dryRun: boolean; taken: Taken }): Promise<void> {
    const s = (obj.spec ??= {}) as Spec;
    const type = s.type ?? 'ClusterIP';
    if (type === 'ExternalName') return;
    const { ips } = this.alloc;
    const requested = s.clusterIPs?.[0] ?? s.clusterIP;
    if (s.clusterIP && s.clusterIPs?.[0] && s.clusterIP !== s.clusterIPs[0])
      this.fail(obj, [fieldErrors.invalid('spec.clusterIPs[0]', s.clusterIPs[0], 'must match `clusterIP` when set')]);
    (s.ipFamilies ?? []).forEach((f, i) => {
      if (f !== 'IPv4' && f !== 'IPv6')
        this.fail(obj, [fieldErrors.notSupported(`spec.ipFamilies[${i}]`, f, ['IPv4', 'IPv6'])]);
      if (f !== ips.ipFamily)
        this.fail(obj, [fieldErrors.invalid(`spec.ipFamilies[${i}]`, f, 'not configured on this cluster')]);
    });
    if (s.ipFamilyPolicy === 'RequireDualStack' && requested !== 'None')
      this.fail(obj, [
        fieldErrors.invalid(
          'spec.ipFamilyPolicy',
          s.ipFamilyPolicy,
          'this cluster is not configured for dual-stack services',
        ),
      ]);
    if (requested === 'None') {
      s.clusterIP = 'None';
      s.clusterIPs = ['None'];
      // As Kubernetes: a headless Service without a selector asks for every family of the cluster.
      s.ipFamilyPolicy ??= s.selector && Object.keys(s.selector).length > 0 ? 'SingleStack' : 'RequireDualStack';
      s.ipFamilies ??= [ips.ipFamily];
    } else {
      let index: number | undefined;
      if (requested) {
        if (isIP(requested) === 0)
          this.fail(obj, [
            fieldErrors.invalid(
              'spec.clusterIPs[0]',
              requested,
              'must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)',
            ),
          ]);
        index = ips.indexOf(requested);
        const why =
          index === undefined
            ? `the provided IP (${requested}) is not in the valid range. The range of valid IPs is ${ips.cidr}`
            : (await ips.bitmap.allocate(index, { dryRun: o.dryRun }))
              ? undefined
              : 'provided IP is already allocated';
        if (why)
          this.fail(obj, [
            fieldErrors.invalid('spec.clusterIPs', [requested], `failed to allocate IP ${requested}: ${why}`),
          ]);
      } else {
        index = await ips.bitmap.allocateNext({ dryRun: o.dryRun });
        if (index === undefined) throw internalError('failed to allocate a serviceIP: range is full');
      }
      if (!o.dryRun) o.taken.ip = index;
      const ip = ips.ipAt(index as number);
      s.clusterIP = ip;
      s.clusterIPs = [ip];
      s.ipFamilies ??= [ips.ipFamily];
      s.ipFamilyPolicy ??= 'SingleStack';
    }
    s.internalTrafficPolicy ??= 'Cluster';
    if (!needsNodePorts(type)) return;
    s.externalTrafficPolicy ??= 'Cluster';
    if (type === 'LoadBalancer') s.allocateLoadBalancerNodePorts ??= true;
    if (type === 'LoadBalancer' && s.allocateLoadBalancerNodePorts === false) return;
    await this.allocatePorts(obj, o);
  }

  private async allocatePorts(
    obj: ApiObject,
    o: { dryRun: boolean; taken: Taken; skip?: (port: number) => boolean },
  ): Promise<void> {
    const { nodePorts } = this.alloc;
    const ports = ((obj.spec as Spec).ports ??= []);
    for (const [i, p] of ports.entries()) {
      if (p.nodePort && o.skip?.(p.nodePort)) continue; // already the Service's
      let index: number | undefined;
      if (p.nodePort) {
        index = nodePorts.indexOf(p.nodePort);
        const why =
          index === undefined
            ? `provided port is not in the valid range. The range of valid ports is ${nodePorts.text}`
            : (await nodePorts.bitmap.allocate(index, { dryRun: o.dryRun }))
              ? undefined
              : 'provided port is already allocated';
        if (why) this.fail(obj, [fieldErrors.invalid(`spec.ports[${i}].nodePort`, p.nodePort, why)]);
      } else {
        index = await nodePorts.bitmap.allocateNext({ dryRun: o.dryRun });
        if (index === undefined) throw internalError('failed to allocate a nodePort: range is full');
      }
      if (!o.dryRun) o.taken.ports.push(index as number);
      p.nodePort = nodePorts.portAt(index as number);
    }
  }
}
