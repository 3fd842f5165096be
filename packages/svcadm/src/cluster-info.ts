import { bootstrapToolName, group, isAlreadyExists, naming, type ApiObject } from '@svc/api';
import { ResourceClient, type GroupVersionResource, type RestClient } from '@svc/client';
import YAML from 'yaml';
import { defaultNodeTokenGroup } from './token.js';

/** The signed ConfigMap in the public namespace and its data key (the spec's literal names). */
export const CLUSTER_INFO = 'cluster-info';
export const KUBECONFIG_KEY = 'kubeconfig';
export const JWS_KEY_PREFIX = 'jws-kubeconfig-';

/** The user name of the bootstrap svcconfig `svcadm join` writes (kubeadm's). */
export const BOOTSTRAP_USER = 'tls-bootstrap-token-user';

const b64 = (s: string): string => Buffer.from(s).toString('base64');

/**
 * The `kubeconfig` of cluster-info: one unnamed cluster with the server and the CA data, no
 * users or contexts (what kubeadm publishes).
 */
export function clusterInfoKubeconfig(server: string, caPem: string): string {
  return YAML.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    preferences: {},
    clusters: [{ name: '', cluster: { 'certificate-authority-data': b64(caPem), server } }],
    contexts: null,
    'current-context': '',
    users: null,
  });
}

/** The server and CA (PEM) of a cluster-info kubeconfig; throws when it has no usable cluster. */
export function clusterOfKubeconfig(text: string): { server: string; caPem: string } {
  const doc = YAML.parse(text) as { clusters?: Array<{ cluster?: Record<string, unknown> }> } | null;
  const cluster = doc?.clusters?.[0]?.cluster;
  const server = cluster?.server;
  const ca = cluster?.['certificate-authority-data'];
  if (typeof server !== 'string' || !server || typeof ca !== 'string' || !ca)
    throw new Error('failed to get cluster config from cluster-info: no server and certificate-authority-data');
  return { server, caPem: Buffer.from(ca, 'base64').toString('utf8') };
}

/** The svcconfig a joining node's agent starts with: server, CA and the bootstrap token. */
export function bootstrapSvcconfig(o: { server: string; caPem: string; token: string }): string {
  const cluster = naming().clusterName;
  const context = `${BOOTSTRAP_USER}@${cluster}`;
  return YAML.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    preferences: {},
    clusters: [{ name: cluster, cluster: { 'certificate-authority-data': b64(o.caPem), server: o.server } }],
    users: [{ name: BOOTSTRAP_USER, user: { token: o.token } }],
    contexts: [{ name: context, context: { cluster, user: BOOTSTRAP_USER } }],
    'current-context': context,
  });
}

const rbac = (resource: string): GroupVersionResource => ({
  group: group('rbac.authorization'),
  version: 'v1',
  resource,
});

/** The objects `svcadm init cluster-info` keeps in place, each with the resource it belongs to. */
export function joinObjects(server: string, caPem: string): Array<{ gvr: GroupVersionResource; obj: ApiObject }> {
  const publicNs = naming().publicNamespace;
  const rbacGv = `${group('rbac.authorization')}/v1`;
  const tool = bootstrapToolName();
  const certificates = group('certificates');
  const clusterInfoReader = `${tool}:bootstrap-signer-clusterinfo`;
  const binding = (name: string, clusterRole: string, subject: string): ApiObject => ({
    apiVersion: rbacGv,
    kind: 'ClusterRoleBinding',
    metadata: { name },
    roleRef: { apiGroup: group('rbac.authorization'), kind: 'ClusterRole', name: clusterRole },
    subjects: [{ apiGroup: group('rbac.authorization'), kind: 'Group', name: subject }],
  });
  return [
    {
      gvr: { group: '', version: 'v1', resource: 'configmaps' },
      obj: {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: CLUSTER_INFO, namespace: publicNs },
        data: { [KUBECONFIG_KEY]: clusterInfoKubeconfig(server, caPem) },
      },
    },
    {
      gvr: rbac('roles'),
      obj: {
        apiVersion: rbacGv,
        kind: 'Role',
        metadata: { name: clusterInfoReader, namespace: publicNs },
        rules: [{ verbs: ['get'], apiGroups: [''], resources: ['configmaps'], resourceNames: [CLUSTER_INFO] }],
      },
    },
    {
      gvr: rbac('rolebindings'),
      obj: {
        apiVersion: rbacGv,
        kind: 'RoleBinding',
        metadata: { name: clusterInfoReader, namespace: publicNs },
        roleRef: { apiGroup: group('rbac.authorization'), kind: 'Role', name: clusterInfoReader },
        subjects: [{ apiGroup: group('rbac.authorization'), kind: 'User', name: 'system:anonymous' }],
      },
    },
    {
      gvr: rbac('clusterrolebindings'),
      obj: binding(`${tool}:svclet-bootstrap`, 'system:node-bootstrapper', defaultNodeTokenGroup()),
    },
    {
      gvr: rbac('clusterrolebindings'),
      obj: binding(
        `${tool}:node-autoapprove-bootstrap`,
        `system:${certificates}:certificatesigningrequests:nodeclient`,
        defaultNodeTokenGroup(),
      ),
    },
    {
      gvr: rbac('clusterrolebindings'),
      obj: binding(
        `${tool}:node-autoapprove-certificate-rotation`,
        `system:${certificates}:certificatesigningrequests:selfnodeclient`,
        'system:nodes',
      ),
    },
  ];
}

function sameRoleRef(a: unknown, b: unknown): boolean {
  const x = (a ?? {}) as { kind?: string; name?: string };
  const y = (b ?? {}) as { kind?: string; name?: string };
  return x.kind === y.kind && x.name === y.name;
}

/**
 * Creates `obj`, or brings an existing one to it: a ConfigMap keeps its other data keys (the
 * signatures, which the signer renews); a binding whose roleRef differs (immutable) is
 * replaced; anything else is overwritten. Returns whether it was created.
 */
export async function ensureObject(client: RestClient, gvr: GroupVersionResource, obj: ApiObject): Promise<boolean> {
  const ns = obj.metadata.namespace;
  const res = ns ? new ResourceClient(client, gvr).namespace(ns) : new ResourceClient(client, gvr);
  try {
    await res.create(obj);
    return true;
  } catch (e) {
    if (!isAlreadyExists(e)) throw e;
  }
  const current = await res.get(obj.metadata.name ?? '');
  if (obj.kind === 'ConfigMap') {
    await res.update({ ...current, data: { ...(current.data as object | undefined), ...(obj.data as object) } });
  } else if ('roleRef' in obj && !sameRoleRef(current.roleRef, obj.roleRef)) {
    await res.delete(obj.metadata.name ?? '');
    await res.create(obj);
  } else {
    await res.update({ ...current, ...obj, metadata: { ...current.metadata, ...obj.metadata } });
  }
  return false;
}
