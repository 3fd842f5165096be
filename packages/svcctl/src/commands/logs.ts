import type { Invocation } from '../invocation.js';
import { Session } from '../session.js';
import { resourcePath, type Discovery } from '../discovery.js';
import { CliError, statusOf } from '../errors.js';
import { cliAnnotation } from '../cli-annotations.js';
import type { ApiObjectJson } from '../objects.js';
import { allContainerNames, rankPods, type Pod } from '../streaming/pods.js';

export interface LogsOptions {
  follow?: boolean;
  previous?: boolean;
  container?: string;
  timestamps?: boolean;
  tail?: string;
  since?: string;
  sinceTime?: string;
  limitBytes?: string;
  allContainers?: boolean;
  prefix?: boolean;
  selector?: string;
}

function hasContainer(p: Pod, name: string): boolean {
  return [
    ...(p.spec?.containers ?? []),
    ...(p.spec?.initContainers ?? []),
    ...(p.spec?.ephemeralContainers ?? []),
  ].some((c) => c.name === name);
}

/** Go duration text (`5s`, `2m`, `1h`) in seconds, rounded up as kubectl does. */
function sinceSeconds(v: string): number {
  const units: Record<string, number> = { h: 3600, m: 60, s: 1, ms: 0.001 };
  let total = 0;
  const re = /(\d+(?:\.\d+)?)(h|ms|m|s)/gy;
  let at = 0;
  let m: RegExpExecArray | null;
  while ((m = re.exec(v)) !== null) {
    total += Number(m[1]) * (units[m[2] ?? 's'] ?? 1);
    at = re.lastIndex;
  }
  if (at !== v.length || at === 0) {
    // Go's time.ParseDuration's words, in pflag's flag-error form.
    const unit = /^(?:\d+(?:\.\d+)?(?:h|ms|m|s))*\d+(?:\.\d+)?([^\d.]*)/.exec(v)?.[1];
    const why =
      unit === undefined
        ? `invalid duration "${v}"`
        : unit === ''
          ? `missing unit in duration "${v}"`
          : `unknown unit "${unit}" in duration "${v}"`;
    throw new CliError(
      `Error: invalid argument "${v}" for "--since" flag: time: ${why}\nSee 'svcctl logs --help' for usage.`,
      1,
      true,
    );
  }
  return Math.ceil(total);
}

/** The pods a `logs` argument names: a pod, `pod/NAME`, or one pod of a workload (`deployment/web`). */
async function podsFor(session: Session, o: { discovery: Discovery; arg?: string; selector?: string }): Promise<Pod[]> {
  const pods = o.discovery.builtin({ group: '', resource: 'pods' });
  const ns = session.namespace;
  if (o.selector) {
    const list = await session.call<{ items?: Pod[] }>('GET', resourcePath(pods, { namespace: ns }), {
      query: { labelSelector: o.selector },
    });
    return list.items ?? [];
  }
  const arg = o.arg ?? '';
  const slash = arg.indexOf('/');
  const type = slash >= 0 ? arg.slice(0, slash) : 'pod';
  const name = slash >= 0 ? arg.slice(slash + 1) : arg;
  const r = o.discovery.resolve(type)[0];
  if (!r) throw new CliError(`the server doesn't have a resource type "${type}"`);
  if (r.resource === 'pods' && r.group === '') {
    try {
      return [await session.call<Pod>('GET', resourcePath(pods, { namespace: ns, name }))];
    } catch (e) {
      // kubectl's own wording for a missing pod.
      if (statusOf(e)?.reason === 'NotFound')
        throw new CliError(`error from server (NotFound): pods "${name}" not found in namespace "${ns}"`);
      throw e;
    }
  }
  const owner = await session.call<ApiObjectJson & { spec?: { selector?: { matchLabels?: Record<string, string> } } }>(
    'GET',
    resourcePath(r, { namespace: ns, name }),
  );
  const labels = owner.spec?.selector?.matchLabels ?? {};
  const selector = Object.entries(labels)
    .map(([k, v]) => `${k}=${v}`)
    .join(',');
  if (!selector)
    throw new CliError(
      `cannot get the logs from ${r.kind.toLowerCase()}: selector for ${r.resource}/${name} has no match labels`,
    );
  const list = await session.call<{ items?: Pod[] }>('GET', resourcePath(pods, { namespace: ns }), {
    query: { labelSelector: selector },
  });
  const items = rankPods(list.items ?? []);
  const first = items[0];
  if (!first) throw new CliError(`timed out waiting for the condition`);
  if (items.length > 1) session.io.err(`Found ${items.length} pods, using pod/${first.metadata?.name ?? ''}\n`);
  return [first];
}

/** `logs`: the pods/log subresource of one pod (or of every pod `-l` selects), streamed with `-f`. */
export async function run(inv: Invocation<LogsOptions>): Promise<void> {
  const { io, opts, args } = inv;
  if (!opts.selector && args.length === 0)
    throw new CliError(
      "expected 'logs [-f] [-p] (POD | TYPE/NAME) [-c CONTAINER]'.\nPOD or TYPE/NAME is a required argument for the logs command\nSee 'svcctl logs -h' for help and examples",
    );
  if (opts.selector && args.length > 0) throw new CliError('only a selector (-l) or a POD name is allowed');
  const [, containerArg] = args;
  if (opts.sinceTime && opts.since) throw new CliError('at most one of `sinceTime` or `sinceSeconds` may be specified');
  const session = Session.open(inv.globals, io);
  try {
    const discovery = await session.discovery();
    const podRes = discovery.builtin({ group: '', resource: 'pods' });
    const pods = await podsFor(session, { discovery, arg: args[0], selector: opts.selector });
    const defaultAnnotation = cliAnnotation(discovery.naming, 'default-container');
    const prefix = opts.prefix === true;
    for (const pod of pods) {
      let containers: string[];
      const wanted = opts.container ?? containerArg;
      if (opts.allContainers)
        containers = [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])].map((c) => c.name);
      else if (wanted) containers = [wanted];
      else {
        const fromAnnotation = pod.metadata?.annotations?.[defaultAnnotation];
        let name = '';
        if (fromAnnotation) {
          if (hasContainer(pod, fromAnnotation)) name = fromAnnotation;
          else io.err(`Default container name "${fromAnnotation}" not found in pod ${pod.metadata?.name ?? ''}\n`);
        }
        if (!name) {
          name = pod.spec?.containers?.[0]?.name ?? '';
          const many =
            (pod.spec?.containers?.length ?? 0) > 1 ||
            (pod.spec?.initContainers?.length ?? 0) > 0 ||
            (pod.spec?.ephemeralContainers?.length ?? 0) > 0;
          if (many) io.err(`Defaulted container "${name}" out of: ${allContainerNames(pod)}\n`);
        }
        containers = [name];
      }
      for (const c of containers) {
        if (!hasContainer(pod, c)) {
          throw new CliError(`container ${c} is not valid for pod ${pod.metadata?.name ?? ''}`);
        }
        const res = await session.stream(
          resourcePath(podRes, { namespace: pod.metadata?.namespace, name: pod.metadata?.name, subresource: 'log' }),
          {
            accept: '*/*',
            query: {
              container: c,
              follow: opts.follow ? 'true' : undefined,
              previous: opts.previous ? 'true' : undefined,
              timestamps: opts.timestamps ? 'true' : undefined,
              tailLines: opts.tail !== undefined && Number(opts.tail) >= 0 ? opts.tail : undefined,
              sinceSeconds: opts.since ? sinceSeconds(opts.since) : undefined,
              sinceTime: opts.sinceTime,
              limitBytes: opts.limitBytes,
            },
          },
        );
        const tag = prefix ? `[pod/${pod.metadata?.name ?? ''}/${c}] ` : '';
        let partial = '';
        try {
          for await (const chunk of res.body) {
            const text = partial + (chunk as Buffer).toString('utf8');
            if (!tag) {
              io.out(text);
              continue;
            }
            const lines = text.split('\n');
            partial = lines.pop() ?? '';
            for (const l of lines) io.out(`${tag}${l}\n`);
          }
          if (partial) io.out(`${tag}${partial}`);
        } catch (e) {
          if (!io.signal?.aborted) throw e;
        }
      }
    }
  } finally {
    session.close();
  }
}
