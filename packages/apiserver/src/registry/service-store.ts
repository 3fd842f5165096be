import { isIP } from 'node:net';
import { fieldErrors, internalError, invalid, type ApiObject, type FieldError } from '@svc/api';
import { clone } from './object-utils.js';
import type { ClusterIpRange, NodePortRange } from './service-allocator.js';
import { GenericStore, type DeleteParams, type DeleteResult, type StoreOptions, type WriteParams } from './store.js';

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

  private async allocatePorts(obj: ApiObject, o: { dryRun: boolean; taken: Taken }): Promise<void> {
    const { nodePorts } = this.alloc;
    const ports = ((obj.spec as Spec).ports ??= []);
    for (const [i, p] of ports.entries()) {
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
