import { statefulSetPodLabel, type PersistentVolumeClaim, type Pod, type StatefulSet } from '@svc/api';
import {
  claimIsStale,
  claimOwnerRefs,
  identityMatches,
  newStatefulSetPod,
  parentAndOrdinal,
  storageMatches,
} from './statefulset-util.js';

const set = (policy: StatefulSet['spec']['persistentVolumeClaimRetentionPolicy'], replicas = 2): StatefulSet => ({
  metadata: { name: 'web', namespace: 'ns', uid: 'set-uid' },
  spec: {
    replicas,
    serviceName: 'svc',
    selector: { matchLabels: { app: 'web' } },
    template: {
      metadata: { labels: { app: 'web' } },
      spec: { containers: [{ name: 'c', image: 'busybox' }], volumes: [{ name: 'data', emptyDir: {} }] },
    },
    volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: {} }],
    persistentVolumeClaimRetentionPolicy: policy,
  },
});
const pod = (ordinal: number): Pod => ({
  metadata: { name: `web-${ordinal}`, uid: `pod-${ordinal}` },
  spec: { containers: [] },
});
const named = (name: string): Pod => ({ metadata: { name }, spec: { containers: [] } });
const claim = (refs: PersistentVolumeClaim['metadata']['ownerReferences'] = []): PersistentVolumeClaim => ({
  metadata: { name: 'data-web-1', ownerReferences: refs },
});
const setRef = { apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'web', uid: 'set-uid' };
const podRef = (ordinal: number): { apiVersion: string; kind: string; name: string; uid: string } => ({
  apiVersion: 'v1',
  kind: 'Pod',
  name: `web-${ordinal}`,
  uid: `pod-${ordinal}`,
});

describe('statefulset identity', () => {
  it('names, labels, hostname, subdomain and the claim volume replacing the template volume', () => {
    const s = set(undefined);
    const p = newStatefulSetPod(s, s.spec.template, 3);
    expect(p.metadata.name).toBe('web-3');
    expect(p.metadata.labels).toEqual({
      app: 'web',
      [statefulSetPodLabel('pod-name')]: 'web-3',
      [statefulSetPodLabel('pod-index')]: '3',
    });
    expect(p.spec).toMatchObject({ hostname: 'web-3', subdomain: 'svc' });
    expect(p.spec?.volumes).toEqual([{ name: 'data', persistentVolumeClaim: { claimName: 'data-web-3' } }]);
    expect(identityMatches(s, p) && storageMatches(s, p)).toBe(true);
    expect(identityMatches(s, { ...p, metadata: { ...p.metadata, labels: { app: 'web' } } })).toBe(false);
    expect(parentAndOrdinal(named('my-set-12'))).toEqual({ parent: 'my-set', ordinal: 12 });
    expect(parentAndOrdinal(named('web'))).toBeUndefined();
  });
});

describe('claimOwnerRefs (updateClaimOwnerRefForSetAndPod)', () => {
  const cases: Array<{
    whenDeleted: 'Retain' | 'Delete';
    whenScaled: 'Retain' | 'Delete';
    before: ReturnType<typeof podRef>[];
    ordinal: number;
    want: ReturnType<typeof podRef>[];
  }> = [
    { whenDeleted: 'Retain', whenScaled: 'Retain', before: [setRef, podRef(1)], ordinal: 1, want: [] },
    { whenDeleted: 'Delete', whenScaled: 'Retain', before: [], ordinal: 1, want: [setRef] },
    { whenDeleted: 'Retain', whenScaled: 'Delete', before: [], ordinal: 1, want: [] },
    { whenDeleted: 'Retain', whenScaled: 'Delete', before: [], ordinal: 2, want: [podRef(2)] },
    { whenDeleted: 'Delete', whenScaled: 'Delete', before: [], ordinal: 1, want: [setRef] },
    { whenDeleted: 'Delete', whenScaled: 'Delete', before: [setRef], ordinal: 2, want: [podRef(2)] },
  ];
  it.each(cases)('whenDeleted $whenDeleted, whenScaled $whenScaled, pod $ordinal', (c) => {
    const s = set({ whenDeleted: c.whenDeleted, whenScaled: c.whenScaled });
    const refs = claimOwnerRefs(claim([...c.before]), s, pod(c.ordinal));
    expect(refs ?? c.before).toEqual(c.want);
  });

  it('answers undefined when the references are already right; a claim of another pod is stale', () => {
    expect(
      claimOwnerRefs(claim([setRef]), set({ whenDeleted: 'Delete', whenScaled: 'Retain' }), pod(0)),
    ).toBeUndefined();
    expect(claimIsStale(claim([podRef(1)]), pod(1))).toBe(false);
    expect(claimIsStale(claim([podRef(1)]), named('web-1'))).toBe(true);
  });
});
