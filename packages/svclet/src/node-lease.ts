import { group, isConflict, isNotFound, naming, type Lease } from '@svc/api';
import { ResourceClient, type RestClient } from '@svc/client';
import type { Logger } from '@svc/component-base';
import { sleep } from '@svc/machinery';

const leasesResource = () => ({ group: group('coordination'), version: 'v1', resource: 'leases' });

/** The Lease MicroTime format (RFC 3339 with microseconds). */
function microTime(now = Date.now()): string {
  return new Date(now).toISOString().replace(/Z$/, '000Z');
}

export interface NodeLeaseOptions {
  client: RestClient;
  nodeName: string;
  /** `nodeLeaseDurationSeconds`; the lease is renewed every quarter of it (40 s → 10 s). */
  leaseDurationSeconds: number;
  /** The Node's uid, for the Lease's owner reference (the Lease goes when the Node does). */
  nodeUid?: string;
  logger: Logger;
}

/**
 * Kubernetes' node lease controller: the Lease `<node>` in the node-lease namespace, held by
 * the node, owned by its Node, its `renewTime` renewed every quarter of the lease duration.
 * A failed renewal reads the Lease again and retries (up to 5 times, then waits for the next
 * interval); a missing Lease is created again.
 */
export class NodeLeaseController {
  private readonly api: ResourceClient<Lease>;
  private latest?: Lease;
  /** When the Lease was last written successfully (ms; 0 = never). */
  lastRenewed = 0;

  constructor(private readonly o: NodeLeaseOptions) {
    this.api = new ResourceClient<Lease>(o.client, leasesResource()).namespace(naming().nodeLeaseNamespace);
  }

  get renewIntervalMs(): number {
    return this.o.leaseDurationSeconds * 250;
  }

  private fresh(): Lease {
    const lease: Lease = {
      apiVersion: `${group('coordination')}/v1`,
      kind: 'Lease',
      metadata: { name: this.o.nodeName, namespace: naming().nodeLeaseNamespace },
      spec: {
        holderIdentity: this.o.nodeName,
        leaseDurationSeconds: this.o.leaseDurationSeconds,
        renewTime: microTime(),
      },
    };
    if (this.o.nodeUid)
      lease.metadata.ownerReferences = [{ apiVersion: 'v1', kind: 'Node', name: this.o.nodeName, uid: this.o.nodeUid }];
    return lease;
  }

  /** One renewal: update the known Lease, or read (or create) it first. */
  async renew(signal: AbortSignal): Promise<void> {
    for (let attempt = 0; attempt < 5; attempt++) {
      try {
        if (!this.latest) {
          try {
            this.latest = await this.api.get(this.o.nodeName, { signal });
          } catch (e) {
            if (!isNotFound(e)) throw e;
            this.latest = await this.api.create(this.fresh(), { signal });
            this.lastRenewed = Date.now();
            return;
          }
        }
        const base = this.latest;
        const next: Lease = {
          ...base,
          spec: {
            ...base.spec,
            holderIdentity: this.o.nodeName,
            leaseDurationSeconds: this.o.leaseDurationSeconds,
            renewTime: microTime(),
          },
        };
        if (this.o.nodeUid && !(base.metadata.ownerReferences ?? []).some((r) => r.uid === this.o.nodeUid)) {
          next.metadata = {
            ...base.metadata,
            ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: this.o.nodeName, uid: this.o.nodeUid }],
          };
        }
        this.latest = await this.api.update(next, { signal });
        this.lastRenewed = Date.now();
        return;
      } catch (e) {
        this.latest = undefined;
        if (signal.aborted) return;
        if (attempt === 4) throw e;
        if (!isConflict(e))
          this.o.logger.v(2).info('failed to update lease, will retry', { node: this.o.nodeName, error: String(e) });
      }
    }
  }

  /** Renews until `signal` fires. */
  async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      try {
        await this.renew(signal);
      } catch (e) {
        if (!signal.aborted)
          this.o.logger.warn('failed to ensure lease exists, will retry', { node: this.o.nodeName, error: String(e) });
      }
      await sleep(this.renewIntervalMs, signal);
    }
  }
}
