import { forbidden, group, naming, type ApiObject } from '@svc/api';
import { nodeNameOf } from '../authz/node.js';
import type { AdmissionAttributes, AdmissionPlugin } from './admission.js';

/** The mirror-pod annotation (`<labelPrefix>/config.mirror`, as Kubernetes' `kubernetes.io/config.mirror`). */
export function mirrorPodAnnotation(): string {
  return `${naming().labelPrefix}/config.mirror`;
}

/** Labels a node may not set on itself (`node-restriction.<labelPrefix>/`). */
export function nodeRestrictionLabelPrefix(): string {
  return `node-restriction.${naming().labelPrefix}/`;
}

/**
 * Kubernetes' NodeRestriction admission plugin, for requests by nodes only: a node may
 * write only its own Node (never `node-restriction.<prefix>/` labels on it), only pods bound
 * to it (and create only mirror pods bound to it), and only its own Lease.
 */
export class NodeRestriction implements AdmissionPlugin {
  readonly name = 'NodeRestriction';

  async validate(a: AdmissionAttributes): Promise<void> {
    const node = nodeNameOf(a.user);
    if (!node) return;
    const r = a.resource;
    const deny = (why: string): never => {
      throw forbidden(`${r.plural}${r.group ? '.' + r.group : ''} "${a.name}" is forbidden: node "${node}" ${why}`);
    };
    if (r.group === '' && r.plural === 'nodes') {
      if (a.name !== node) deny(`is not allowed to modify node "${a.name}"`);
      if (a.operation === 'CREATE' || a.operation === 'UPDATE') {
        const labels = (a.object?.metadata.labels ?? {}) as Record<string, string>;
        const old = (a.oldObject?.metadata.labels ?? {}) as Record<string, string>;
        for (const [k, v] of Object.entries(labels)) {
          if (k.startsWith(nodeRestrictionLabelPrefix()) && old[k] !== v) deny(`is not allowed to modify labels: ${k}`);
        }
        for (const k of Object.keys(old)) {
          if (k.startsWith(nodeRestrictionLabelPrefix()) && !(k in labels))
            deny(`is not allowed to modify labels: ${k}`);
        }
      }
      return;
    }
    if (r.group === '' && r.plural === 'pods') {
      const boundTo = (p: ApiObject | undefined): string | undefined =>
        (p?.spec as { nodeName?: string } | undefined)?.nodeName;
      if (a.operation === 'CREATE' && !a.subresource) {
        if (!a.object?.metadata.annotations?.[mirrorPodAnnotation()]) deny('can only create mirror pods');
        if (boundTo(a.object) !== node) deny(`can only create pods with spec.nodeName set to itself`);
        return;
      }
      const target = a.oldObject ?? a.object;
      if (target && boundTo(target) !== node) deny(`can only modify pods bound to itself`);
      return;
    }
    if (r.group === group('coordination') && r.plural === 'leases') {
      if (a.namespace !== naming().nodeLeaseNamespace || a.name !== node)
        deny('can only access its own lease in the node-lease namespace');
    }
  }
}
