import { deploymentAnnotation, podTemplateHashLabel } from '@svc/api/names';
import type { Invocation } from '../invocation.js';
import { Session } from '../session.js';
import { kindPrefix, resourcePath, type Discovery } from '../discovery.js';
import { CliError } from '../errors.js';
import { cliAnnotation } from '../cli-annotations.js';
import { inNaming } from '../server-names.js';
import { lastAppliedAnnotation } from '../last-applied.js';
import { objectRefs, type ObjectRef } from '../object-refs.js';
import { tabwrite } from '../printers/tabwriter.js';
import { jsonEqual } from '../three-way-patch.js';
import { dryRunSuffix, fieldManagerFor, parseDryRun } from '../write-options.js';
import { parseRequestTimeout } from '../flags.js';
import { describePodTemplate } from '../describe/pod-template.js';
import type { ApiObjectJson } from '../objects.js';

export interface RolloutOptions {
  filename?: string[];
  recursive?: boolean;
  selector?: string;
  watch?: boolean;
  timeout?: string;
  revision?: string;
  toRevision?: string;
  dryRun?: string | boolean;
}

interface Condition {
  type: string;
  status: string;
  reason?: string;
}

interface PodTemplate {
  metadata?: { labels?: Record<string, string>; annotations?: Record<string, string>; [k: string]: unknown };
  spec?: Record<string, unknown>;
}

interface Deployment extends ApiObjectJson {
  spec?: { replicas?: number; paused?: boolean; template?: PodTemplate };
  status?: {
    observedGeneration?: number;
    replicas?: number;
    updatedReplicas?: number;
    availableReplicas?: number;
    conditions?: Condition[];
  };
}

interface ReplicaSet extends ApiObjectJson {
  spec?: { template?: PodTemplate };
}

/** `deployments.apps "web"`: how kubectl names an object in its errors. */
function qualified(ref: ObjectRef): string {
  const r = ref.resource;
  return `${r.group ? `${r.resource}.${r.group}` : r.resource} "${ref.name}"`;
}

function deploymentsOnly(ref: ObjectRef): void {
  if (ref.resource.kind !== 'Deployment')
    throw new CliError(`no status viewer has been implemented for ${ref.resource.kind}`);
}

/** kubectl's DeploymentStatusViewer: the line to print, and whether the rollout is done. */
export function deploymentStatus(d: Deployment): { text: string; done: boolean } {
  const name = d.metadata?.name ?? '';
  const st = d.status ?? {};
  if (((d.metadata?.generation as number | undefined) ?? 0) <= (st.observedGeneration ?? 0)) {
    const progressing = st.conditions?.find((c) => c.type === 'Progressing');
    if (progressing?.reason === 'ProgressDeadlineExceeded')
      throw new CliError(`deployment "${name}" exceeded its progress deadline`);
    const want = d.spec?.replicas;
    const updated = st.updatedReplicas ?? 0;
    if (want !== undefined && updated < want) {
      return {
        text: `Waiting for deployment "${name}" rollout to finish: ${updated} out of ${want} new replicas have been updated...\n`,
        done: false,
      };
    }
    if ((st.replicas ?? 0) > updated) {
      return {
        text: `Waiting for deployment "${name}" rollout to finish: ${(st.replicas ?? 0) - updated} old replicas are pending termination...\n`,
        done: false,
      };
    }
    if ((st.availableReplicas ?? 0) < updated) {
      return {
        text: `Waiting for deployment "${name}" rollout to finish: ${st.availableReplicas ?? 0} of ${updated} updated replicas are available...\n`,
        done: false,
      };
    }
    return { text: `deployment "${name}" successfully rolled out\n`, done: true };
  }
  return { text: 'Waiting for deployment spec update to be observed...\n', done: false };
}

async function refs(inv: Invocation<RolloutOptions>, session: Session, discovery: Discovery): Promise<ObjectRef[]> {
  return objectRefs(inv.args, { ...inv.opts, session, discovery, io: inv.io, cli: 'svcctl' });
}

/** `rollout status`: follows the deployment until it is rolled out (or once with `--watch=false`). */
export async function runStatus(inv: Invocation<RolloutOptions>): Promise<void> {
  const { io, opts } = inv;
  const session = Session.open(inv.globals, io);
  try {
    const discovery = await session.discovery();
    const list = await refs(inv, session, discovery);
    if (list.length !== 1 || !list[0])
      throw new CliError(
        'rollout status is only supported on individual resources and resource collections, but multiple resources were found',
      );
    const ref = list[0];
    deploymentsOnly(ref);
    const path = resourcePath(ref.resource, { namespace: ref.namespace, name: ref.name });
    const timeoutMs = parseRequestTimeout(opts.timeout);
    // --timeout=0 (the default) waits for ever.
    const deadline = timeoutMs ? Date.now() + timeoutMs : Infinity;
    let last = '';
    for (;;) {
      const d = await session.call<Deployment>('GET', path);
      const { text, done } = deploymentStatus(d);
      if (text !== last) io.out(text);
      last = text;
      if (done || opts.watch === false) return;
      if (Date.now() > deadline) throw new CliError('timed out waiting for the condition');
      if (io.signal?.aborted) return;
      await new Promise((r) => setTimeout(r, 200));
    }
  } finally {
    session.close();
  }
}

/** The ReplicaSets a deployment controls (by controller owner reference), with their revisions. */
async function replicaSetsOf(
  session: Session,
  o: { discovery: Discovery; d: Deployment; revisionKey: string },
): Promise<Array<{ rs: ReplicaSet; revision: number }>> {
  const rsRes = o.discovery.builtin({ group: 'apps', resource: 'replicasets' });
  const list = await session.call<{ items?: ReplicaSet[] }>(
    'GET',
    resourcePath(rsRes, { namespace: o.d.metadata?.namespace }),
  );
  const uid = o.d.metadata?.uid as string | undefined;
  return (list.items ?? [])
    .filter((rs) =>
      ((rs.metadata?.ownerReferences as Array<{ uid?: string; controller?: boolean }> | undefined) ?? []).some(
        (r) => r.controller && r.uid === uid,
      ),
    )
    .map((rs) => ({ rs, revision: Number.parseInt(rs.metadata?.annotations?.[o.revisionKey] ?? '', 10) }))
    .filter((x) => Number.isFinite(x.revision));
}

function names(discovery: Discovery): {
  revision: string;
  history: string;
  desired: string;
  max: string;
  hash: string;
  changeCause: string;
} {
  return inNaming(discovery.naming, () => {
    const revision = deploymentAnnotation('revision');
    return {
      revision,
      history: deploymentAnnotation('revision-history'),
      desired: deploymentAnnotation('desired-replicas'),
      max: deploymentAnnotation('max-replicas'),
      hash: podTemplateHashLabel(),
      // Kubernetes' kubernetes.io/change-cause: the well-known annotation prefix of the revision annotation.
      changeCause: `${revision.slice(revision.indexOf('.') + 1, revision.indexOf('/'))}/change-cause`,
    };
  });
}

/** `rollout history`: the revisions of a deployment (`--revision=N`: that revision's pod template). */
export async function runHistory(inv: Invocation<RolloutOptions>): Promise<void> {
  const { io, opts } = inv;
  const session = Session.open(inv.globals, io);
  try {
    const discovery = await session.discovery();
    const n = names(discovery);
    for (const ref of await refs(inv, session, discovery)) {
      deploymentsOnly(ref);
      const d = await session.call<Deployment>(
        'GET',
        resourcePath(ref.resource, { namespace: ref.namespace, name: ref.name }),
      );
      const rss = (await replicaSetsOf(session, { discovery, d, revisionKey: n.revision })).sort(
        (a, b) => a.revision - b.revision,
      );
      const wanted = opts.revision === undefined ? 0 : Number(opts.revision);
      let info: string;
      if (wanted > 0) {
        const hit = rss.find((x) => x.revision === wanted);
        if (!hit) throw new CliError(`unable to find the specified revision`);
        info = describePodTemplate(hit.rs.spec?.template ?? {});
      } else if (rss.length === 0) {
        info = 'No rollout history found.';
      } else {
        const lines = ['REVISION\tCHANGE-CAUSE'];
        for (const { rs, revision } of rss)
          lines.push(`${revision}\t${rs.metadata?.annotations?.[n.changeCause] || '<none>'}`);
        info = tabwrite(lines.map((l) => `${l}\n`).join(''), { minWidth: 0, padding: 2 });
      }
      io.out(`${kindPrefix(ref.resource)}/${ref.name} ${wanted > 0 ? `with revision #${wanted}` : ''}\n${info}\n`);
    }
  } finally {
    session.close();
  }
}

/** Pod templates equal but for the pod-template-hash label (kubectl's equalIgnoreHash). */
function equalIgnoreHash(a: PodTemplate, b: PodTemplate, hash: string): boolean {
  const strip = (t: PodTemplate): PodTemplate => {
    const labels = { ...(t.metadata?.labels ?? {}) };
    delete labels[hash];
    return { ...t, metadata: { ...t.metadata, labels } };
  };
  return jsonEqual(strip(a), strip(b));
}

/** `rollout undo`: the deployment's template back to a former revision's (the previous one by default). */
export async function runUndo(inv: Invocation<RolloutOptions>): Promise<void> {
  const { io, opts } = inv;
  const dryRun = parseDryRun(opts.dryRun);
  const toRevision = opts.toRevision === undefined ? 0 : Number(opts.toRevision);
  const session = Session.open(inv.globals, io);
  try {
    const discovery = await session.discovery();
    const n = names(discovery);
    for (const ref of await refs(inv, session, discovery)) {
      deploymentsOnly(ref);
      if (toRevision < 0) throw new CliError(`unable to find specified revision ${toRevision} in history`);
      const path = resourcePath(ref.resource, { namespace: ref.namespace, name: ref.name });
      const d = await session.call<Deployment>('GET', path);
      const rss = await replicaSetsOf(session, { discovery, d, revisionKey: n.revision });
      let target: ReplicaSet | undefined;
      if (toRevision > 0) {
        target = rss.find((x) => x.revision === toRevision)?.rs;
        if (!target) throw new CliError(`unable to find specified revision ${toRevision} in history`);
      } else {
        const sorted = [...rss].sort((a, b) => b.revision - a.revision);
        target = sorted[1]?.rs;
        if (!target) throw new CliError(`no rollout history found for deployment "${ref.name}"`);
      }
      const template = target.spec?.template ?? {};
      const prefix = `${kindPrefix(ref.resource)}/${ref.name}`;
      if (dryRun === 'client') {
        io.out(`${prefix} ${describePodTemplate(template)}${dryRunSuffix(dryRun)}\n`);
        continue;
      }
      if (d.spec?.paused)
        throw new CliError(
          "you cannot rollback a paused deployment; resume it first with 'svcctl rollout resume' and try again",
        );
      const revisionOf = toRevision > 0 ? toRevision : (rss.find((x) => x.rs === target)?.revision ?? 0);
      if (equalIgnoreHash(template, d.spec?.template ?? {}, n.hash)) {
        io.out(
          `${prefix} skipped rollback (current template already matches revision ${revisionOf})${dryRunSuffix(dryRun)}\n`,
        );
        continue;
      }
      const labels = { ...(template.metadata?.labels ?? {}) };
      delete labels[n.hash];
      const restored: PodTemplate = { ...template, metadata: { ...template.metadata, labels } };
      const skip = new Set([lastAppliedAnnotation(discovery.naming), n.revision, n.history, n.desired, n.max]);
      const annotations: Record<string, string> = {};
      for (const k of skip) {
        const v = d.metadata?.annotations?.[k];
        if (v !== undefined) annotations[k] = v;
      }
      for (const [k, v] of Object.entries(target.metadata?.annotations ?? {})) if (!skip.has(k)) annotations[k] = v;
      try {
        await session.call('PATCH', path, {
          body: [
            { op: 'replace', path: '/spec/template', value: restored },
            { op: 'replace', path: '/metadata/annotations', value: annotations },
          ],
          contentType: 'application/json-patch+json',
          query: { dryRun: dryRun === 'server' ? 'All' : undefined, fieldManager: fieldManagerFor('rollout') },
        });
      } catch (e) {
        throw new CliError(`failed restoring revision ${revisionOf}: ${(e as Error).message}`);
      }
      io.out(`${prefix} rolled back${dryRunSuffix(dryRun)}\n`);
    }
  } finally {
    session.close();
  }
}

/** `rollout restart`: stamps the pod template with the CLI's restartedAt annotation, so every pod is replaced. */
export async function runRestart(inv: Invocation<RolloutOptions>): Promise<void> {
  const { io, opts } = inv;
  const dryRun = parseDryRun(opts.dryRun);
  const session = Session.open(inv.globals, io);
  try {
    const discovery = await session.discovery();
    for (const ref of await refs(inv, session, discovery)) {
      if (!['Deployment', 'DaemonSet', 'StatefulSet'].includes(ref.resource.kind)) {
        throw new CliError(`${qualified(ref)} restarting is not supported`);
      }
      const path = resourcePath(ref.resource, { namespace: ref.namespace, name: ref.name });
      const d = await session.call<Deployment>('GET', path);
      if (d.spec?.paused)
        throw new CliError(`${qualified(ref)} can't restart paused deployment (run rollout resume first)`);
      const stamp = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
      const patch = {
        spec: { template: { metadata: { annotations: { [cliAnnotation(discovery.naming, 'restartedAt')]: stamp } } } },
      };
      if (dryRun !== 'client') {
        await session.call('PATCH', path, {
          body: patch,
          contentType: 'application/strategic-merge-patch+json',
          query: { dryRun: dryRun === 'server' ? 'All' : undefined, fieldManager: fieldManagerFor('rollout') },
        });
      }
      io.out(`${kindPrefix(ref.resource)}/${ref.name} restarted${dryRunSuffix(dryRun)}\n`);
    }
  } finally {
    session.close();
  }
}

/** `rollout pause` / `rollout resume`: sets `spec.paused`; an object already so is an error, as in kubectl. */
async function setPaused(inv: Invocation<RolloutOptions>, paused: boolean): Promise<void> {
  const { io, opts } = inv;
  const dryRun = parseDryRun(opts.dryRun);
  const verb = paused ? 'paused' : 'resumed';
  const session = Session.open(inv.globals, io);
  try {
    const discovery = await session.discovery();
    for (const ref of await refs(inv, session, discovery)) {
      if (ref.resource.kind !== 'Deployment')
        throw new CliError(`${qualified(ref)} ${paused ? 'pausing' : 'resuming'} is not supported`);
      const path = resourcePath(ref.resource, { namespace: ref.namespace, name: ref.name });
      const d = await session.call<Deployment>('GET', path);
      const prefix = `${kindPrefix(ref.resource)}/${ref.name}`;
      if ((d.spec?.paused === true) === paused)
        throw new CliError(`${qualified(ref)} ${paused ? 'is already paused' : 'is not paused'}`);
      if (dryRun !== 'client') {
        await session.call('PATCH', path, {
          body: { spec: { paused: paused ? true : null } },
          contentType: 'application/strategic-merge-patch+json',
          query: { dryRun: dryRun === 'server' ? 'All' : undefined, fieldManager: fieldManagerFor('rollout') },
        });
      }
      io.out(`${prefix} ${verb}${dryRunSuffix(dryRun)}\n`);
    }
  } finally {
    session.close();
  }
}

export function runPause(inv: Invocation<RolloutOptions>): Promise<void> {
  return setPaused(inv, true);
}

export function runResume(inv: Invocation<RolloutOptions>): Promise<void> {
  return setPaused(inv, false);
}
