import { nodeTaintKey, type Node, type Taint } from '@svc/api';
import type { AdmissionAttributes, AdmissionPlugin } from './admission.js';

/**
 * Kubernetes' TaintNodesByCondition: a Node is created with the `node.<prefix>/not-ready:NoSchedule`
 * taint (unless it has one with that key and effect already), so nothing is scheduled on it
 * before the node lifecycle controller has seen it Ready and removed the taint. Only creates of
 * the Node itself; updates and subresources are left alone.
 */
export class TaintNodesByCondition implements AdmissionPlugin {
  readonly name = 'TaintNodesByCondition';

  async admit(a: AdmissionAttributes): Promise<void> {
    if (a.operation !== 'CREATE' || a.subresource !== '' || !a.object) return;
    if (a.resource.group !== '' || a.resource.plural !== 'nodes') return;
    const node = a.object as Node;
    const spec = (node.spec ??= {});
    const notReady: Taint = { key: nodeTaintKey('not-ready'), effect: 'NoSchedule' };
    const taints = spec.taints ?? [];
    if (taints.some((t) => t.key === notReady.key && t.effect === notReady.effect)) return;
    spec.taints = [...taints, notReady];
  }
}
