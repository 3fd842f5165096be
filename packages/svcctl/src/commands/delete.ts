import type { Invocation } from '../invocation.js';
import { Session } from '../session.js';
import { kindPrefix, resourcePath } from '../discovery.js';
import { CliError, statusOf } from '../errors.js';
import { objectRefs, type ObjectRef, type RefOptions } from '../object-refs.js';
import { report } from '../manifest-writes.js';
import { parseDryRun, dryRunSuffix } from '../write-options.js';
import { parseRequestTimeout } from '../flags.js';
import type { ApiObjectJson } from '../objects.js';

export interface DeleteOptions extends RefOptions {
  cascade?: string | boolean;
  gracePeriod?: string;
  now?: boolean;
  force?: boolean;
  wait?: boolean;
  timeout?: string;
  ignoreNotFound?: boolean;
  output?: string;
  dryRun?: string | boolean;
}

/** `--cascade`: background (also `true`, the default), foreground, orphan (also `false`). */
export function propagationPolicy(v: string | boolean | undefined): 'Background' | 'Foreground' | 'Orphan' {
  const s = v === undefined || v === true ? 'background' : v === false ? 'false' : v.toLowerCase();
  if (s === 'background' || s === 'true') return 'Background';
  if (s === 'foreground') return 'Foreground';
  if (s === 'orphan' || s === 'false') return 'Orphan';
  throw new CliError(`invalid cascade value (${String(v)}). Must be "background", "foreground", or "orphan".`);
}

function gracePeriod(o: DeleteOptions): number | undefined {
  let g = o.gracePeriod === undefined ? -1 : Number(o.gracePeriod);
  if (!Number.isInteger(g)) throw new CliError(`invalid argument "${o.gracePeriod ?? ''}" for "--grace-period" flag`);
  if (o.now) {
    if (g !== -1) throw new CliError('--now and --grace-period cannot be specified together');
    g = 1;
  }
  if (o.force && g === -1) g = 0;
  if (g === 0 && !o.force) g = 1;
  return g >= 0 ? g : undefined;
}

/** Waits until the object (that uid) is gone; kubectl's `delete --wait`. */
async function waitGone(session: Session, o: { ref: ObjectRef; uid?: string; deadline: number }): Promise<boolean> {
  const path = resourcePath(o.ref.resource, { namespace: o.ref.namespace, name: o.ref.name });
  for (;;) {
    try {
      const cur = await session.call<ApiObjectJson>('GET', path);
      if (o.uid && cur.metadata?.uid !== o.uid) return true;
    } catch (e) {
      if (statusOf(e)?.reason === 'NotFound') return true;
      throw e;
    }
    if (Date.now() > o.deadline) return false;
    await new Promise((r) => setTimeout(r, 100));
  }
}

export async function run(inv: Invocation<DeleteOptions>): Promise<void> {
  const { opts, io } = inv;
  const dryRun = parseDryRun(opts.dryRun);
  const policy = propagationPolicy(opts.cascade);
  const grace = gracePeriod(opts);
  if (opts.output !== undefined && opts.output !== 'name') {
    throw new CliError(`unexpected -o output mode: ${opts.output}. We only support '-o name'`);
  }
  if (opts.all && opts.selector) throw new CliError('cannot set --all and --selector at the same time');
  if (opts.force && grace === 0) {
    io.err(
      'Warning: Immediate deletion does not wait for confirmation that the running resource has been terminated. The resource may continue to run on the cluster indefinitely.\n',
    );
  }
  const session = Session.open(inv.globals, io);
  try {
    const discovery = await session.discovery();
    const refs = await objectRefs(inv.args, { ...opts, session, discovery, io, cli: 'svcctl' });
    if (refs.length === 0) {
      if (!opts.ignoreNotFound) io.out('No resources found\n');
      return;
    }
    const timeoutMs = parseRequestTimeout(opts.timeout);
    const deleted: Array<{ ref: ObjectRef; uid?: string }> = [];
    for (const ref of refs) {
      const kind = kindPrefix(ref.resource);
      const printDeleted = (): void => {
        if (opts.output === 'name') io.out(`${kind}/${ref.name}\n`);
        else
          io.out(
            `${kind} "${ref.name}" ${opts.force && grace === 0 ? 'force deleted' : 'deleted'}${dryRunSuffix(dryRun)}\n`,
          );
      };
      if (dryRun === 'client') {
        printDeleted();
        continue;
      }
      try {
        const body: Record<string, unknown> = { kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy: policy };
        if (grace !== undefined) body.gracePeriodSeconds = grace;
        const answer = await session.call<ApiObjectJson & { details?: { uid?: string } }>(
          'DELETE',
          resourcePath(ref.resource, { namespace: ref.namespace, name: ref.name }),
          { body, query: { dryRun: dryRun === 'server' ? 'All' : undefined } },
        );
        const uid = (answer?.metadata?.uid as string | undefined) ?? answer?.details?.uid;
        deleted.push({ ref, uid });
        printDeleted();
      } catch (e) {
        if (opts.ignoreNotFound && statusOf(e)?.reason === 'NotFound') continue;
        report(inv, e);
      }
    }
    if (opts.wait !== false && dryRun === 'none') {
      const deadline = Date.now() + (timeoutMs ?? 7 * 24 * 3600_000);
      for (const d of deleted) {
        if (!(await waitGone(session, { ref: d.ref, uid: d.uid, deadline }))) {
          report(inv, new CliError(`timed out waiting for the condition on ${d.ref.resource.resource}/${d.ref.name}`));
        }
      }
    }
  } finally {
    session.close();
  }
}
