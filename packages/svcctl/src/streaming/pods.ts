/** The pod a streaming command (exec, port-forward) talks to, and its default container. */
import type { NamingScheme } from '@svc/api/names';
import { resourcePath, type Discovery } from '../discovery.js';
import { CliError } from '../errors.js';
import { cliAnnotation } from '../cli-annotations.js';
import type { ApiObjectJson } from '../objects.js';
import type { Session } from '../session.js';
import type { SvcctlIo } from '../io.js';

export interface Pod extends ApiObjectJson {
  spec?: {
    containers?: Array<{ name: string; ports?: Array<{ name?: string; containerPort: number; protocol?: string }> }>;
    initContainers?: Array<{ name: string }>;
    ephemeralContainers?: Array<{ name: string }>;
  };
  status?: { phase?: string; conditions?: Array<{ type: string; status: string }> };
}

/** The pod's containers as kubectl lists them in its notices: `a, b (ephem), c (init)`. */
export function allContainerNames(p: Pod): string {
  return [
    ...(p.spec?.containers ?? []).map((c) => c.name),
    ...(p.spec?.ephemeralContainers ?? []).map((c) => `${c.name} (ephem)`),
    ...(p.spec?.initContainers ?? []).map((c) => `${c.name} (init)`),
  ].join(', ');
}

/** Pods in kubectl's order for picking one: ready and running first, then the older. */
export function rankPods(pods: Pod[]): Pod[] {
  const ready = (p: Pod): number =>
    p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ? 0 : 1;
  const running = (p: Pod): number => (p.status?.phase === 'Running' ? 0 : 1);
  return [...pods].sort(
    (a, b) =>
      ready(a) - ready(b) ||
      running(a) - running(b) ||
      Date.parse(a.metadata?.creationTimestamp ?? '') - Date.parse(b.metadata?.creationTimestamp ?? ''),
  );
}

/**
 * The container to use when none is named: the CLI's default-container annotation of the
 * server's naming, else the first, with kubectl's "Defaulted container" notice when there are several.
 */
export function defaultContainer(pod: Pod, o: { naming: NamingScheme; io: SvcctlIo; quiet?: boolean }): string {
  const wanted = pod.metadata?.annotations?.[cliAnnotation(o.naming, 'default-container')];
  const all = [
    ...(pod.spec?.containers ?? []),
    ...(pod.spec?.initContainers ?? []),
    ...(pod.spec?.ephemeralContainers ?? []),
  ];
  if (wanted) {
    if (all.some((c) => c.name === wanted)) return wanted;
    o.io.err(`Default container name "${wanted}" not found in pod ${pod.metadata?.name ?? ''}\n`);
  }
  const name = pod.spec?.containers?.[0]?.name ?? '';
  if (all.length > 1 && !o.quiet) o.io.err(`Defaulted container "${name}" out of: ${allContainerNames(pod)}\n`);
  return name;
}

/**
 * The pod an argument names: `NAME`, `pod/NAME`, or the first pod (in kubectl's order) a
 * workload or service selects (`deploy/web`, `svc/web`).
 */
export async function attachablePod(session: Session, o: { discovery: Discovery; arg: string }): Promise<Pod> {
  const pods = o.discovery.builtin({ group: '', resource: 'pods' });
  const ns = session.namespace;
  const slash = o.arg.indexOf('/');
  const type = slash >= 0 ? o.arg.slice(0, slash) : 'pod';
  const name = slash >= 0 ? o.arg.slice(slash + 1) : o.arg;
  const r = o.discovery.resolve(type)[0];
  if (!r) throw new CliError(`the server doesn't have a resource type "${type}"`);
  if (r.resource === 'pods' && r.group === '') {
    return session.call<Pod>('GET', resourcePath(pods, { namespace: ns, name }));
  }
  const owner = await session.call<
    ApiObjectJson & { spec?: { selector?: { matchLabels?: Record<string, string> } | Record<string, string> } }
  >('GET', resourcePath(r, { namespace: ns, name }));
  const sel = owner.spec?.selector ?? {};
  // A Service's selector is a plain map; a workload's has matchLabels.
  const labels =
    (r.resource === 'services' ? sel : (sel as { matchLabels?: Record<string, string> }).matchLabels) ?? {};
  const selector = Object.entries(labels as Record<string, string>)
    .map(([k, v]) => `${k}=${v}`)
    .join(',');
  if (!selector)
    throw new CliError(`cannot attach to ${r.kind}: selector for ${r.resource}/${name} has no match labels`);
  const list = await session.call<{ items?: Pod[] }>('GET', resourcePath(pods, { namespace: ns }), {
    query: { labelSelector: selector },
  });
  const first = rankPods(list.items ?? [])[0];
  if (!first) throw new CliError(`no pods found for ${r.resource}/${name}`);
  return first;
}
