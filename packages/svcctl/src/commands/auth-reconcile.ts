import type { Invocation } from '../invocation.js';
import { Session } from '../session.js';
import { kindPrefix, resourcePath, type ServedResource } from '../discovery.js';
import { CliError, statusOf } from '../errors.js';
import { readManifests } from '../manifests.js';
import { resolveObjects, type ResolvedObject } from '../resolve-objects.js';
import { parseDryRun } from '../write-options.js';
import type { ApiObjectJson } from '../objects.js';
import { jsonEqual } from '../three-way-patch.js';
import { ruleText, uncovered, type PolicyRule } from '../rbac/policy-rules.js';

export interface ReconcileOptions {
  filename?: string[];
  recursive?: boolean;
  removeExtraPermissions?: boolean;
  removeExtraSubjects?: boolean;
  dryRun?: string | boolean;
  output?: string;
}

interface Subject {
  kind?: string;
  apiGroup?: string;
  name?: string;
  namespace?: string;
}

interface RbacObject extends ApiObjectJson {
  rules?: PolicyRule[];
  subjects?: Subject[];
  roleRef?: { apiGroup?: string; kind?: string; name?: string };
  aggregationRule?: { clusterRoleSelectors?: unknown[] };
}

type Operation = 'none' | 'create' | 'update' | 'recreate';

interface Result {
  object: RbacObject;
  operation: Operation;
  protected: boolean;
  missingRules?: PolicyRule[];
  extraRules?: PolicyRule[];
  missingSubjects?: Subject[];
  extraSubjects?: Subject[];
}

/** Go's `%+v` of a Subject. */
function subjectText(s: Subject): string {
  return `{Kind:${s.kind ?? ''} APIGroup:${s.apiGroup ?? ''} Name:${s.name ?? ''} Namespace:${s.namespace ?? ''}}`;
}

/** Later maps win; undefined when all are undefined (Go's nil map). */
function merge(...maps: Array<Record<string, string> | undefined>): Record<string, string> | undefined {
  let out: Record<string, string> | undefined;
  for (const m of maps) if (m) out = { ...(out ?? {}), ...m };
  return out;
}

const sameSubject = (a: Subject, b: Subject): boolean =>
  (a.kind ?? '') === (b.kind ?? '') &&
  (a.apiGroup ?? '') === (b.apiGroup ?? '') &&
  (a.name ?? '') === (b.name ?? '') &&
  (a.namespace ?? '') === (b.namespace ?? '');

function onlyIn(a: Subject[], b: Subject[]): Subject[] {
  const out: Subject[] = [];
  for (const x of a) if (!b.some((y) => sameSubject(x, y)) && !out.some((y) => sameSubject(x, y))) out.push(x);
  return out;
}

/** The reconciled role (component-helpers' computeReconciledRole). */
function reconcileRole(
  existing: RbacObject,
  o: { expected: RbacObject; removeExtra: boolean; autoupdate: string },
): Result {
  const { expected, removeExtra, autoupdate } = o;
  const meta = { ...existing.metadata };
  const r: Result = {
    object: { ...existing, metadata: meta },
    operation: 'none',
    protected: existing.metadata?.annotations?.[autoupdate] === 'false',
  };
  meta.annotations = merge(expected.metadata?.annotations, existing.metadata?.annotations);
  if (!jsonEqual(meta.annotations, existing.metadata?.annotations)) r.operation = 'update';
  meta.labels = merge(expected.metadata?.labels, existing.metadata?.labels);
  if (!jsonEqual(meta.labels, existing.metadata?.labels)) r.operation = 'update';
  if (!expected.aggregationRule || !existing.aggregationRule)
    r.extraRules = uncovered(expected.rules ?? [], existing.rules ?? []);
  r.missingRules = uncovered(existing.rules ?? [], expected.rules ?? []);
  if (!removeExtra && r.missingRules.length > 0) {
    r.object.rules = [...(existing.rules ?? []), ...r.missingRules];
    r.operation = 'update';
  } else if (removeExtra && (r.missingRules.length > 0 || (r.extraRules ?? []).length > 0)) {
    r.object.rules = expected.rules ?? [];
    r.operation = 'update';
  }
  const want = expected.aggregationRule?.clusterRoleSelectors ?? [];
  const have = existing.aggregationRule?.clusterRoleSelectors ?? [];
  const missingSel = expected.aggregationRule ? want.filter((s) => !have.some((h) => jsonEqual(h, s))) : [];
  const extraSel = existing.aggregationRule ? have.filter((s) => !want.some((w) => jsonEqual(w, s))) : [];
  if (!expected.aggregationRule && existing.aggregationRule) {
    delete r.object.aggregationRule;
    r.operation = 'update';
  } else if (!removeExtra && missingSel.length > 0) {
    r.object.aggregationRule = { clusterRoleSelectors: [...have, ...missingSel] };
    r.operation = 'update';
  } else if (removeExtra && (missingSel.length > 0 || extraSel.length > 0)) {
    r.object.aggregationRule = expected.aggregationRule;
    r.operation = 'update';
  }
  return r;
}

/** The reconciled binding: a changed roleRef recreates it (roleRef is immutable), else subjects are added (or replaced). */
function reconcileBinding(
  existing: RbacObject,
  o: { expected: RbacObject; removeExtra: boolean; autoupdate: string },
): Result {
  const { expected, removeExtra, autoupdate } = o;
  const prot = existing.metadata?.annotations?.[autoupdate] === 'false';
  if (!jsonEqual(existing.roleRef ?? {}, expected.roleRef ?? {})) {
    return { object: expected, operation: 'recreate', protected: prot, missingSubjects: [], extraSubjects: [] };
  }
  const meta = { ...existing.metadata };
  const r: Result = { object: { ...existing, metadata: meta }, operation: 'none', protected: prot };
  meta.annotations = merge(expected.metadata?.annotations, existing.metadata?.annotations);
  if (!jsonEqual(meta.annotations, existing.metadata?.annotations)) r.operation = 'update';
  meta.labels = merge(expected.metadata?.labels, existing.metadata?.labels);
  if (!jsonEqual(meta.labels, existing.metadata?.labels)) r.operation = 'update';
  r.missingSubjects = onlyIn(expected.subjects ?? [], existing.subjects ?? []);
  r.extraSubjects = onlyIn(existing.subjects ?? [], expected.subjects ?? []);
  if (!removeExtra && r.missingSubjects.length > 0) {
    r.object.subjects = [...(existing.subjects ?? []), ...r.missingSubjects];
    r.operation = 'update';
  } else if (removeExtra && (r.missingSubjects.length > 0 || r.extraSubjects.length > 0)) {
    r.object.subjects = expected.subjects ?? [];
    r.operation = 'update';
  }
  return r;
}

const KINDS = ['Role', 'ClusterRole', 'RoleBinding', 'ClusterRoleBinding'];

/**
 * `auth reconcile -f`: creates or updates RBAC roles and bindings so they grant at least what
 * the manifests say (all of it and only it with `--remove-extra-*`); a binding whose roleRef
 * changed is deleted and created again, as the spec asks. Other kinds are skipped.
 */
export async function runReconcile(inv: Invocation<ReconcileOptions>): Promise<void> {
  const { opts, io } = inv;
  if (!opts.filename?.length) throw new CliError('must specify one of -f and -k');
  const dryRun = parseDryRun(opts.dryRun);
  if (dryRun === 'server') throw new CliError('--dry-run=server for command reconcile is not supported yet');
  if (opts.output !== undefined && opts.output !== 'name')
    throw new CliError(`unsupported output format ${opts.output}`);
  const session = Session.open(inv.globals, io);
  try {
    const discovery = await session.discovery();
    const rbac = discovery.group('rbac.authorization');
    const autoupdate = `${rbac}/autoupdate`;
    const objects = resolveObjects(
      await readManifests(opts.filename, { io, recursive: opts.recursive, verb: 'reconcile' }),
      {
        discovery,
        namespace: session.namespace,
        explicitNamespace: session.explicitNamespace,
      },
    );
    for (const o of objects) {
      if (o.resource.group !== rbac || !KINDS.includes(o.resource.kind)) continue;
      if (o.resource.version !== 'v1') throw new CliError(`only ${rbac}/v1 is supported: not ${o.resource.version}`);
      const result = await reconcileOne(session, {
        o,
        removeExtraPermissions: !!opts.removeExtraPermissions,
        removeExtraSubjects: !!opts.removeExtraSubjects,
        confirm: dryRun === 'none',
        autoupdate,
      });
      printResult(inv, { r: result, resource: o.resource, name: o.name, opts });
    }
  } finally {
    session.close();
  }
}

async function reconcileOne(
  session: Session,
  c: {
    o: ResolvedObject;
    removeExtraPermissions: boolean;
    removeExtraSubjects: boolean;
    confirm: boolean;
    autoupdate: string;
  },
): Promise<Result> {
  const { o } = c;
  const expected = o.obj as RbacObject;
  const path = resourcePath(o.resource, { namespace: o.namespace, name: o.name });
  const isBinding = o.resource.kind.endsWith('Binding');
  for (let attempt = 0; ; attempt++) {
    if (attempt > 3) throw new CliError('exceeded maximum attempts');
    let existing: RbacObject | undefined;
    try {
      existing = await session.call<RbacObject>('GET', path);
    } catch (e) {
      if (statusOf(e)?.reason !== 'NotFound') throw e;
    }
    const r: Result = existing
      ? isBinding
        ? reconcileBinding(existing, { expected, removeExtra: c.removeExtraSubjects, autoupdate: c.autoupdate })
        : reconcileRole(existing, { expected, removeExtra: c.removeExtraPermissions, autoupdate: c.autoupdate })
      : isBinding
        ? { object: expected, operation: 'create', protected: false, missingSubjects: expected.subjects ?? [] }
        : { object: expected, operation: 'create', protected: false, missingRules: expected.rules ?? [] };
    if (r.protected || !c.confirm || r.operation === 'none') return r;
    try {
      if (r.operation === 'recreate' && existing) {
        try {
          await session.call('DELETE', path, {
            body: { kind: 'DeleteOptions', apiVersion: 'v1', preconditions: { uid: existing.metadata?.uid } },
          });
        } catch (e) {
          const reason = statusOf(e)?.reason;
          if (reason === 'Conflict') continue;
          if (reason !== 'NotFound') throw e;
        }
      }
      if (r.operation === 'update') r.object = await session.call<RbacObject>('PUT', path, { body: r.object });
      else {
        if (o.namespace) await ensureNamespace(session, o.namespace);
        const { resourceVersion: _rv, uid: _uid, ...meta } = r.object.metadata ?? {};
        r.object = await session.call<RbacObject>('POST', resourcePath(o.resource, { namespace: o.namespace }), {
          body: { ...r.object, metadata: meta },
        });
      }
      return r;
    } catch (e) {
      const reason = statusOf(e)?.reason;
      if (reason === 'AlreadyExists' || reason === 'NotFound' || reason === 'Conflict') continue;
      throw e;
    }
  }
}

/** Best effort, as kubectl: the namespace of a role or binding is created when missing and allowed. */
async function ensureNamespace(session: Session, namespace: string): Promise<void> {
  const discovery = await session.discovery();
  const ns = discovery.builtin({ group: '', resource: 'namespaces' });
  try {
    await session.call('GET', resourcePath(ns, { name: namespace }));
    return;
  } catch (e) {
    const reason = statusOf(e)?.reason;
    if (reason !== 'NotFound' && reason !== 'Forbidden') throw e;
  }
  try {
    await session.call('POST', resourcePath(ns), {
      body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } },
    });
  } catch (e) {
    const reason = statusOf(e)?.reason;
    if (reason !== 'AlreadyExists' && reason !== 'Forbidden') throw e;
  }
}

function printResult(
  inv: Invocation<ReconcileOptions>,
  c: { r: Result; resource: ServedResource; name: string; opts: ReconcileOptions },
): void {
  const { io } = inv;
  const { r, opts } = c;
  const ref = `${kindPrefix(c.resource)}/${c.name}`;
  io.out(opts.output === 'name' ? `${ref}\n` : `${ref} reconciled${opts.dryRun === 'client' ? ' (dry run)' : ''}\n`);
  const caveat = r.protected ? `, but object opted out (${c.resource.group}/autoupdate: false)` : '';
  if (r.operation === 'none') return;
  io.err(`\treconciliation required ${r.operation}${caveat}\n`);
  const section = (title: string, items: string[]): void => {
    if (items.length === 0) return;
    io.err(`\t${title}:\n`);
    for (const i of items) io.err(`\t\t${i}\n`);
  };
  section('missing subjects added', (r.missingSubjects ?? []).map(subjectText));
  if (opts.removeExtraSubjects) section('extra subjects removed', (r.extraSubjects ?? []).map(subjectText));
  section('missing rules added', (r.missingRules ?? []).map(ruleText));
  if (opts.removeExtraPermissions) section('extra rules removed', (r.extraRules ?? []).map(ruleText));
}
