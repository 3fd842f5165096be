import { isAlreadyExists, isConflict, isNotFound, podConfigAnnotation, type Pod } from '@svc/api';
import { ResourceClient, collectionPath, responseError, type ClientLogger, type RestClient } from '@svc/client';
import { podKey } from './types.js';

const PODS = { group: '', version: 'v1', resource: 'pods' };
const NODES = { group: '', version: 'v1', resource: 'nodes' };

/** A mirror pod: the API's copy of a static pod (it carries `config.mirror`). */
export function isMirrorPod(p: Pod): boolean {
  return p.metadata.annotations?.[podConfigAnnotation('mirror')] !== undefined;
}

/** The static pod's hash (`config.hash`, its uid). */
export function staticPodHash(p: Pod): string {
  return p.metadata.annotations?.[podConfigAnnotation('hash')] ?? p.metadata.uid ?? '';
}

/**
 * Keeps one mirror pod in the API per static pod, as Kubernetes' mirror client: the static
 * pod's copy with `config.mirror` = its hash and the Node as controlling owner; a mirror
 * pod with another hash or being deleted is deleted (grace 0, uid precondition) and made
 * again; a mirror pod without a static pod is deleted. Deleting a mirror pod never stops the
 * static pod. Without the Node object no mirror pod is made (Kubernetes needs its uid).
 */
export class MirrorPods {
  private readonly pods: ResourceClient<Pod>;
  private readonly nodes: ResourceClient;

  private registeredUid?: string;

  /** `nodeUid`: resolves with the registered Node's uid (until it does, the Node is read from the API). */
  constructor(
    private readonly o: {
      client: RestClient;
      nodeName: string;
      logger: ClientLogger;
      nodeUid?: Promise<string | undefined>;
    },
  ) {
    this.pods = new ResourceClient<Pod>(o.client, PODS);
    this.nodes = new ResourceClient(o.client, NODES);
    o.nodeUid?.then(
      (uid) => {
        this.registeredUid = uid;
      },
      () => undefined,
    );
  }

  /** One pass over `statics` (the static pods now) and `mirrors` (the mirror pods the cache holds). */
  async sync(statics: readonly Pod[], mirrors: readonly Pod[]): Promise<void> {
    const wanted = new Map(statics.map((s) => [podKey(s), s]));
    const have = new Map<string, Pod>();
    for (const m of mirrors) {
      const s = wanted.get(podKey(m));
      const current =
        s &&
        m.metadata.annotations?.[podConfigAnnotation('mirror')] === staticPodHash(s) &&
        !m.metadata.deletionTimestamp;
      if (current) have.set(podKey(m), m);
      else await this.delete(m, s ? 'stale' : 'orphaned');
    }
    let nodeUid: string | undefined;
    for (const [key, s] of wanted) {
      if (have.has(key)) continue;
      nodeUid ??= await this.nodeUid();
      if (!nodeUid) return;
      await this.create(s, nodeUid);
    }
  }

  private async nodeUid(): Promise<string | undefined> {
    if (this.registeredUid) return this.registeredUid;
    try {
      return (await this.nodes.get(this.o.nodeName)).metadata.uid;
    } catch (e) {
      this.o.logger.warn('no mirror pods without the node object', { node: this.o.nodeName, error: String(e) });
      return undefined;
    }
  }

  private async create(s: Pod, nodeUid: string): Promise<void> {
    const m = structuredClone(s);
    delete m.status;
    delete m.metadata.uid;
    delete m.metadata.resourceVersion;
    m.metadata.annotations = { ...m.metadata.annotations, [podConfigAnnotation('mirror')]: staticPodHash(s) };
    m.metadata.ownerReferences = [
      { apiVersion: 'v1', kind: 'Node', name: this.o.nodeName, uid: nodeUid, controller: true },
    ];
    try {
      // JSON whatever the client's content type: the copy keeps every field of the static pod.
      const r = await this.o.client.request('POST', collectionPath(PODS, m.metadata.namespace ?? 'default'), {
        body: JSON.stringify({ ...m, apiVersion: 'v1', kind: 'Pod' }),
        contentType: 'application/json',
      });
      if (r.status !== 201 && r.status !== 200) throw responseError(r.status, r.body);
      this.o.logger.info('mirror pod created', { pod: podKey(m) });
    } catch (e) {
      if (!isAlreadyExists(e)) this.o.logger.error('cannot create mirror pod', { pod: podKey(m), error: String(e) });
    }
  }

  private async delete(m: Pod, why: string): Promise<void> {
    try {
      await this.pods
        .namespace(m.metadata.namespace ?? '')
        .delete(m.metadata.name ?? '', { gracePeriodSeconds: 0, preconditions: { uid: m.metadata.uid } });
      this.o.logger.info('mirror pod deleted', { pod: podKey(m), why });
    } catch (e) {
      if (!isNotFound(e) && !isConflict(e))
        this.o.logger.error('cannot delete mirror pod', { pod: podKey(m), error: String(e) });
    }
  }
}
