import { NAMINGS, podTemplateHashLabel } from '@svc/api/names';
import { jsonEqual } from '../three-way-patch.js';
import type { Invocation } from '../invocation.js';
import { Session } from '../session.js';
import { resourcePath, type Discovery, type ServedResource } from '../discovery.js';
import { CliError, describeError, statusOf } from '../errors.js';
import { objectRefs, type ObjectRef } from '../object-refs.js';
import { lastAppliedAnnotation } from '../last-applied.js';
import { objectsOfList, type ApiObjectJson } from '../objects.js';
import { describeDeployment, describePod, describeService, type DescribeContext } from '../describe/describers.js';
import { describeNode } from '../describe/node.js';
import { describeGeneric } from '../describe/generic.js';
import { describeReplicaSet } from '../describe/replica-set.js';
import { formatLabelSelector } from '../describe/writer.js';

export interface DescribeOptions {
  filename?: string[];
  recursive?: boolean;
  selector?: string;
  allNamespaces?: boolean;
  showEvents?: boolean;
  chunkSize?: string;
}

type Obj = Record<string, unknown>;

/** The events about an object (kubectl's searchEvents: by name, namespace, kind unless a pod, and uid). */
async function eventsFor(
  session: Session,
  o: { discovery: Discovery; obj: ApiObjectJson; kind: string },
): Promise<Obj[]> {
  const events = o.discovery.builtin({ group: '', resource: 'events' });
  const sel = [
    ...(o.kind && o.kind !== 'Pod' ? [`involvedObject.kind=${o.kind}`] : []),
    `involvedObject.name=${o.obj.metadata?.name ?? ''}`,
    `involvedObject.namespace=${o.obj.metadata?.namespace ?? ''}`,
    ...(o.obj.metadata?.uid ? [`involvedObject.uid=${String(o.obj.metadata.uid)}`] : []),
  ].join(',');
  try {
    const list = await session.call<ApiObjectJson>(
      'GET',
      resourcePath(events, { namespace: o.obj.metadata?.namespace || undefined }),
      {
        query: { fieldSelector: sel },
      },
    );
    return objectsOfList(list) as Obj[];
  } catch {
    return [];
  }
}

interface EndpointSubset {
  addresses?: Array<{ ip?: string }>;
  ports?: Array<{ name?: string; port?: number }>;
}

/** `ip:port` as Go's net.JoinHostPort writes it (IPv6 in brackets). */
const joinHostPort = (ip: string, port: number): string => (ip.includes(':') ? `[${ip}]:${port}` : `${ip}:${port}`);

/**
 * A service's Endpoints as kubectl 1.32's describe prints them per service port name: the
 * first three `ip:port`, then `+ N more...`; `<none>` without subsets or Endpoints.
 */
async function endpointsFor(
  session: Session,
  o: { discovery: Discovery; svc: ApiObjectJson },
): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const res = o.discovery.find('endpoints');
  if (!res || res.group !== '') return out;
  let subsets: EndpointSubset[];
  try {
    const ep = await session.call<{ subsets?: EndpointSubset[] }>(
      'GET',
      resourcePath(res, { namespace: o.svc.metadata?.namespace, name: o.svc.metadata?.name ?? '' }),
    );
    subsets = ep.subsets ?? [];
  } catch {
    return out;
  }
  const ports = ((o.svc.spec as Obj | undefined)?.ports as Array<{ name?: string }> | undefined) ?? [];
  for (const p of ports) {
    const name = p.name ?? '';
    const list: string[] = [];
    let count = 0;
    for (const ss of subsets) {
      const addrs = ss.addresses ?? [];
      if (!ss.ports?.length) {
        for (const a of addrs) {
          if (list.length < 3) list.push(a.ip ?? '');
          count++;
        }
        continue;
      }
      for (const port of ss.ports) {
        if ((port.name ?? '') !== name) continue;
        for (const a of addrs) {
          if (list.length < 3) list.push(joinHostPort(a.ip ?? '', port.port ?? 0));
          count++;
        }
      }
    }
    if (subsets.length > 0) out.set(name, count > 3 ? `${list.join(',')} + ${count - 3} more...` : list.join(','));
  }
  return out;
}

async function contextFor(
  session: Session,
  o: { discovery: Discovery; r: ServedResource; obj: ApiObjectJson; showEvents: boolean },
): Promise<DescribeContext> {
  const { discovery, r, obj } = o;
  const n = NAMINGS[discovery.naming];
  const c: DescribeContext = { skipAnnotations: [lastAppliedAnnotation(discovery.naming)] };
  if (o.showEvents) c.events = await eventsFor(session, { discovery, obj, kind: r.kind });
  if (r.kind === 'Deployment' && r.group === 'apps') {
    const rsRes = discovery.find('replicasets.apps');
    if (rsRes) {
      const list = objectsOfList(
        await session.call<ApiObjectJson>('GET', resourcePath(rsRes, { namespace: obj.metadata?.namespace })),
      );
      const owned = list.filter((rs) =>
        ((rs.metadata?.ownerReferences as Array<{ uid?: string; controller?: boolean }> | undefined) ?? []).some(
          (x) => x.controller && x.uid === obj.metadata?.uid,
        ),
      ) as Obj[];
      const hashless = (t: unknown): unknown => {
        const tt = JSON.parse(JSON.stringify(t ?? {})) as { metadata?: { labels?: Record<string, string> } };
        delete tt.metadata?.labels?.[podTemplateHashLabel()];
        return tt;
      };
      const want = hashless((obj.spec as Obj | undefined)?.template);
      const isNew = (rs: Obj): boolean => jsonEqual(hashless((rs.spec as Obj | undefined)?.template), want);
      owned.sort(
        (a, b) =>
          Date.parse(String((a.metadata as Obj | undefined)?.creationTimestamp)) -
          Date.parse(String((b.metadata as Obj | undefined)?.creationTimestamp)),
      );
      c.newReplicaSets = owned.filter(isNew).slice(0, 1);
      c.oldReplicaSets = owned.filter((rs) => !c.newReplicaSets?.includes(rs));
    }
  }
  if (r.kind === 'Service' && r.group === '') c.endpoints = await endpointsFor(session, { discovery, svc: obj });
  if (r.kind === 'ReplicaSet' && r.group === 'apps') {
    const pods = discovery.builtin({ group: '', resource: 'pods' });
    try {
      const list = await session.call<ApiObjectJson>(
        'GET',
        resourcePath(pods, { namespace: obj.metadata?.namespace }),
        {
          query: { labelSelector: formatLabelSelector((obj.spec as Obj | undefined)?.selector) },
        },
      );
      c.controlledPods = objectsOfList(list).filter((p) =>
        ((p.metadata?.ownerReferences as Array<{ uid?: string; controller?: boolean }> | undefined) ?? []).some(
          (x) => x.controller && x.uid === obj.metadata?.uid,
        ),
      ) as Obj[];
    } catch (e) {
      c.podsError = statusOf(e)?.message ?? (e as Error).message;
    }
  }
  if (r.kind === 'Node' && r.group === '') {
    const pods = discovery.builtin({ group: '', resource: 'pods' });
    try {
      const list = await session.call<ApiObjectJson>('GET', resourcePath(pods), {
        query: {
          fieldSelector: `spec.nodeName=${obj.metadata?.name ?? ''},status.phase!=Failed,status.phase!=Succeeded`,
        },
      });
      c.nodePods = objectsOfList(list) as Obj[];
    } catch {
      /* "not authorized" */
    }
    const leases = discovery.find(`leases.${discovery.group('coordination')}`);
    if (leases) {
      try {
        c.lease = await session.call<Obj>(
          'GET',
          resourcePath(leases, { namespace: n.nodeLeaseNamespace, name: obj.metadata?.name ?? '' }),
        );
      } catch (e) {
        c.leaseError = statusOf(e)?.message ?? (e as Error).message;
      }
    }
    c.nodeRoles = { prefix: `node-role.${n.labelPrefix}/`, label: `${n.labelPrefix}/role` };
  }
  return c;
}

function render(r: ServedResource, obj: Obj, c: DescribeContext): string {
  if (r.group === '' && r.kind === 'Pod') return describePod(obj, c);
  if (r.group === '' && r.kind === 'Service') return describeService(obj, c);
  if (r.group === '' && r.kind === 'Node') return describeNode(obj, c);
  if (r.group === 'apps' && r.kind === 'Deployment') return describeDeployment(obj, c);
  if (r.group === 'apps' && r.kind === 'ReplicaSet') return describeReplicaSet(obj, c);
  return describeGeneric(obj, c);
}

/** `describe`: kubectl's text descriptions of pods, deployments, nodes and services; other kinds field by field. */
export async function run(inv: Invocation<DescribeOptions>): Promise<void> {
  const { io, opts, args } = inv;
  const session = Session.open(inv.globals, io);
  try {
    const discovery = await session.discovery();
    let refs: ObjectRef[];
    const typesOnly = args.length === 1 && !args[0]?.includes('/');
    if (typesOnly && !opts.selector) {
      refs = await objectRefs(args, { ...opts, all: true, session, discovery, io, cli: 'svcctl' });
    } else if (!opts.filename?.length && args.length === 0) {
      throw new CliError(
        `You must specify the type of resource to describe. Use "svcctl api-resources" for a complete list of supported resources.`,
      );
    } else refs = await objectRefs(args, { ...opts, session, discovery, io, cli: 'svcctl' });
    const showEvents = opts.showEvents ?? true;
    const errors: unknown[] = [];
    let first = true;
    const emit = async (ref: ObjectRef, obj: ApiObjectJson): Promise<void> => {
      const c = await contextFor(session, { discovery, r: ref.resource, obj, showEvents });
      const text = render(ref.resource, obj as Obj, c);
      io.out(first ? text : `\n\n${text}`);
      first = false;
    };
    for (const ref of refs) {
      try {
        const obj = await session.call<ApiObjectJson>(
          'GET',
          resourcePath(ref.resource, { namespace: ref.namespace, name: ref.name }),
        );
        await emit(ref, obj);
      } catch (e) {
        if (statusOf(e)?.reason === 'NotFound' && args.length === 2 && refs.length === 1) {
          // kubectl describes every object whose name starts with the one given.
          const list = objectsOfList(
            await session.call<ApiObjectJson>('GET', resourcePath(ref.resource, { namespace: ref.namespace })),
          );
          const matching = list.filter((o) => (o.metadata?.name ?? '').startsWith(ref.name));
          if (matching.length === 0) throw e;
          // kubectl prints each of them followed by a newline of its own.
          for (const o of matching) {
            first = true;
            await emit({ ...ref, name: o.metadata?.name ?? '' }, o);
            io.out('\n');
          }
          continue;
        }
        errors.push(e);
      }
    }
    if (refs.length === 0 && !opts.selector) io.err(`No resources found in ${session.namespace} namespace.\n`);
    for (const e of errors) {
      const { text } = describeError(e);
      io.err(text.endsWith('\n') ? text : `${text}\n`);
    }
    if (errors.length > 0) inv.fail();
  } finally {
    session.close();
  }
}
