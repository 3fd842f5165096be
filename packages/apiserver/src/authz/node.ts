import { group, naming, type ApiObject } from '@svc/api';
import type { UserInfo } from '@svc/component-base';
import type { AuthorizationAttributes, Authorizer, Decision } from './authorizer.js';
import type { StoreInformer } from './rbac/informer.js';

export const NODES_GROUP = 'system:nodes';
const NODE_PREFIX = 'system:node:';

/** The node a user is, if it is one (`system:node:<name>` in `system:nodes`). */
export function nodeNameOf(u: UserInfo | undefined): string | undefined {
  if (!u || !u.groups.includes(NODES_GROUP) || !u.name.startsWith(NODE_PREFIX)) return undefined;
  const name = u.name.slice(NODE_PREFIX.length);
  return name || undefined;
}

type Ref = 'secrets' | 'configmaps' | 'persistentvolumeclaims' | 'serviceaccounts';

/** Every object a pod uses, as `kind/namespace/name` keys (volumes, env, envFrom, image pull secrets, service account). */
export function podReferences(pod: ApiObject): string[] {
  const ns = pod.metadata.namespace ?? '';
  const out = new Set<string>();
  const add = (kind: Ref, name: unknown): void => {
    if (typeof name === 'string' && name) out.add(`${kind}/${ns}/${name}`);
  };
  type Obj = Record<string, unknown>;
  const spec = (pod.spec ?? {}) as Obj;
  add('serviceaccounts', spec.serviceAccountName ?? 'default');
  for (const s of (spec.imagePullSecrets as Obj[] | undefined) ?? []) add('secrets', s.name);
  for (const v of (spec.volumes as Obj[] | undefined) ?? []) {
    add('secrets', (v.secret as Obj | undefined)?.secretName);
    add('configmaps', (v.configMap as Obj | undefined)?.name);
    add('persistentvolumeclaims', (v.persistentVolumeClaim as Obj | undefined)?.claimName);
    for (const src of ((v.projected as Obj | undefined)?.sources as Obj[] | undefined) ?? []) {
      add('secrets', (src.secret as Obj | undefined)?.name);
      add('configmaps', (src.configMap as Obj | undefined)?.name);
    }
    for (const k of ['cephfs', 'cinder', 'flexVolume', 'rbd', 'scaleIO', 'storageos', 'iscsi', 'azureFile', 'csi']) {
      const src = v[k] as Obj | undefined;
      add(
        'secrets',
        (src?.secretRef as Obj | undefined)?.name ??
          (src?.nodePublishSecretRef as Obj | undefined)?.name ??
          (k === 'azureFile' ? src?.secretName : undefined),
      );
    }
  }
  const containers = [
    ...((spec.containers as Obj[] | undefined) ?? []),
    ...((spec.initContainers as Obj[] | undefined) ?? []),
    ...((spec.ephemeralContainers as Obj[] | undefined) ?? []),
  ];
  for (const c of containers) {
    for (const e of (c.env as Obj[] | undefined) ?? []) {
      const from = e.valueFrom as Obj | undefined;
      add('secrets', (from?.secretKeyRef as Obj | undefined)?.name);
      add('configmaps', (from?.configMapKeyRef as Obj | undefined)?.name);
    }
    for (const e of (c.envFrom as Obj[] | undefined) ?? []) {
      add('secrets', (e.secretRef as Obj | undefined)?.name);
      add('configmaps', (e.configMapRef as Obj | undefined)?.name);
    }
  }
  return [...out];
}

/**
 * Kubernetes' graph of what a node may see, kept from the pod informer: pods by node, and
 * for each node the secrets, configmaps, claims and service accounts its pods use.
 * Rebuilt after each batch of pod events (a request may be decided before the event arrives).
 */
function nodeOfPod(p: ApiObject): string | undefined {
  return (p.spec as { nodeName?: string } | undefined)?.nodeName || undefined;
}

export class NodeGraph {
  private readonly podsByNode = new Map<string, Set<string>>();
  /** Per node, each object its pods reference with the number of its pods that do. */
  private readonly refsByNode = new Map<string, Map<string, number>>();

  constructor(private readonly pods: StoreInformer) {
    // One pod at a time: rebuilding from every pod on each change cost O(pods) per pod write.
    pods.onObject((c) => {
      if (c.reset) {
        this.podsByNode.clear();
        this.refsByNode.clear();
        for (const p of this.pods.list()) this.add(p);
        return;
      }
      if (c.old) this.remove(c.old);
      if (c.next) this.add(c.next);
    });
  }

  private add(p: ApiObject): void {
    const node = nodeOfPod(p);
    if (!node) return;
    let pods = this.podsByNode.get(node);
    let refs = this.refsByNode.get(node);
    if (!pods || !refs) {
      pods = new Set();
      refs = new Map();
      this.podsByNode.set(node, pods);
      this.refsByNode.set(node, refs);
    }
    pods.add(`${p.metadata.namespace}/${p.metadata.name}`);
    for (const r of podReferences(p)) refs.set(r, (refs.get(r) ?? 0) + 1);
  }

  private remove(p: ApiObject): void {
    const node = nodeOfPod(p);
    const pods = node ? this.podsByNode.get(node) : undefined;
    const refs = node ? this.refsByNode.get(node) : undefined;
    if (!node || !pods || !refs) return;
    pods.delete(`${p.metadata.namespace}/${p.metadata.name}`);
    for (const r of podReferences(p)) {
      const n = (refs.get(r) ?? 0) - 1;
      if (n > 0) refs.set(r, n);
      else refs.delete(r);
    }
    if (pods.size === 0) {
      this.podsByNode.delete(node);
      this.refsByNode.delete(node);
    }
  }

  hasPod(node: string, namespace: string, name: string): boolean {
    return this.podsByNode.get(node)?.has(`${namespace}/${name}`) ?? false;
  }

  references(node: string, object: { kind: Ref; namespace: string; name: string }): boolean {
    return this.refsByNode.get(node)?.has(`${object.kind}/${object.namespace}/${object.name}`) ?? false;
  }
}

const READ = new Set(['get', 'list', 'watch']);
const WRITE = new Set(['get', 'list', 'watch', 'create', 'update', 'patch', 'delete']);

/**
 * Kubernetes' Node authorizer, for `system:node:<name>` in `system:nodes` only (no opinion
 * for everyone else and for anything not listed): its own Node (and status), its own Lease
 * in the node-lease namespace, pods bound to it (status, eviction, creating mirror pods,
 * which NodeRestriction checks), and reading the secrets, configmaps and claims, and
 * requesting tokens of the service accounts, that those pods use. As the `system:node`
 * role does in Kubernetes, it also lets nodes list and watch nodes and pods (the node
 * agent narrows them with field selectors), read services, write events, request and read
 * their certificates (CSRs) and create TokenReviews and SubjectAccessReviews.
 */
export class NodeAuthorizer implements Authorizer {
  constructor(private readonly graph: NodeGraph) {}

  async authorize(a: AuthorizationAttributes): Promise<{ decision: Decision; reason?: string }> {
    const node = nodeNameOf(a.user);
    if (!node || !a.isResourceRequest) return { decision: 'noOpinion' };
    const allow = { decision: 'allow' as const };
    const none = (why: string): { decision: Decision; reason: string } => ({
      decision: 'noOpinion',
      reason: `node '${node}' ${why}`,
    });
    const v = a.verb;
    if (a.apiGroup === '') {
      switch (a.resource) {
        case 'nodes':
          if (!a.name && (v === 'list' || v === 'watch' || v === 'create')) return allow;
          if (a.name === node && (a.subresource === '' || a.subresource === 'status') && WRITE.has(v)) return allow;
          return none(`cannot ${v} node '${a.name}'`);
        case 'pods':
          if (!a.name && (v === 'list' || v === 'watch' || (v === 'create' && !a.subresource))) return allow;
          if (a.name && this.graph.hasPod(node, a.namespace, a.name)) {
            if (a.subresource === '' && (READ.has(v) || v === 'delete')) return allow;
            if (a.subresource === 'status' && (READ.has(v) || v === 'update' || v === 'patch')) return allow;
            if (a.subresource === 'eviction' && v === 'create') return allow;
          }
          return none(`has no relationship to pod '${a.namespace}/${a.name}'`);
        case 'secrets':
        case 'configmaps':
        case 'persistentvolumeclaims':
          if (
            v === 'get' &&
            a.name &&
            !a.subresource &&
            this.graph.references(node, { kind: a.resource, namespace: a.namespace, name: a.name })
          )
            return allow;
          return none(`has no relationship to ${a.resource} '${a.namespace}/${a.name}'`);
        case 'serviceaccounts':
          if (
            a.subresource === 'token' &&
            v === 'create' &&
            this.graph.references(node, { kind: 'serviceaccounts', namespace: a.namespace, name: a.name })
          )
            return allow;
          return none(`has no relationship to serviceaccount '${a.namespace}/${a.name}'`);
        case 'events':
          if (v === 'create' || v === 'update' || v === 'patch') return allow;
          return { decision: 'noOpinion' };
        case 'services':
          if (READ.has(v)) return allow;
          return { decision: 'noOpinion' };
        default:
          return { decision: 'noOpinion' };
      }
    }
    // The rest of Kubernetes' node rules: its own client-certificate requests, and the reviews its webhook authn/authz makes.
    if (
      a.apiGroup === group('certificates') &&
      a.resource === 'certificatesigningrequests' &&
      !a.subresource &&
      (READ.has(v) || v === 'create')
    )
      return allow;
    if (a.apiGroup === group('authentication') && a.resource === 'tokenreviews' && v === 'create') return allow;
    if (a.apiGroup === group('authorization') && a.resource === 'subjectaccessreviews' && v === 'create') return allow;
    if (a.apiGroup === group('coordination') && a.resource === 'leases') {
      if (a.namespace !== naming().nodeLeaseNamespace) return none('may only use leases in the node-lease namespace');
      if (!a.name && v === 'create') return allow;
      if (a.name === node && WRITE.has(v)) return allow;
      return none(`cannot ${v} lease '${a.name}'`);
    }
    return { decision: 'noOpinion' };
  }
}
