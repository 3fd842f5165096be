import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Invocation } from '../invocation.js';
import { resourcePath } from '../discovery.js';
import { CliError, statusOf, withSource } from '../errors.js';
import { lastAppliedAnnotation, lastAppliedOf, withoutLastApplied } from '../last-applied.js';
import { openManifestWrite, type ManifestWrite, type ManifestWriteOptions } from '../manifest-writes.js';
import { builtinSchema } from '../patch-schema.js';
import type { ResolvedObject } from '../resolve-objects.js';
import { threeWayMergePatch, type JsonObject } from '../three-way-patch.js';
import { toYaml } from '../printers/json-yaml.js';
import { applyFieldManager, fieldManagerFor } from '../write-options.js';

export interface DiffOptions extends ManifestWriteOptions {
  serverSide?: boolean;
  forceConflicts?: boolean;
  showManagedFields?: boolean;
}

type Obj = Record<string, unknown>;

/** kubectl's file name for an object: `[<group>.]<version>.<Kind>.<namespace>.<name>`. */
function fileName(o: ResolvedObject): string {
  const r = o.resource;
  return `${r.group ? `${r.group}.` : ''}${r.version}.${r.kind}.${o.namespace ?? ''}.${o.name}`;
}

/**
 * kubectl's Masker: Secret values are shown as `***`; a value both sides hold but that changed
 * as `*** (before)` / `*** (after)`.
 */
function maskSecrets(live: Obj | undefined, merged: Obj | undefined): void {
  const a = live?.data as Record<string, unknown> | undefined;
  const b = merged?.data as Record<string, unknown> | undefined;
  for (const k of Object.keys(b ?? {})) {
    if (!b) break;
    if (!a || !Object.hasOwn(a, k)) b[k] = '***';
    else if (a[k] === b[k]) {
      a[k] = '***';
      b[k] = '***';
    } else {
      a[k] = '*** (before)';
      b[k] = '*** (after)';
    }
  }
  for (const k of Object.keys(a ?? {})) if (a && (!b || !Object.hasOwn(b, k))) a[k] = '***';
}

function withoutManagedFields(o: Obj | undefined): Obj | undefined {
  if (!o) return o;
  const meta = { ...((o.metadata as Obj | undefined) ?? {}) };
  delete meta.managedFields;
  return { ...o, metadata: meta };
}

/** What applying `o` would make of the live object: a server-side dry run of the same apply. */
async function merged(
  inv: Invocation<DiffOptions>,
  c: { w: ManifestWrite; o: ResolvedObject; live?: JsonObject },
): Promise<Obj> {
  const { w, o } = c;
  const path = resourcePath(o.resource, { namespace: o.namespace, name: o.name });
  if (inv.opts.serverSide) {
    return w.session.call<Obj>('PATCH', path, {
      body: o.obj,
      contentType: 'application/apply-patch+yaml',
      query: {
        dryRun: 'All',
        fieldManager: inv.opts.fieldManager ?? applyFieldManager(),
        force: inv.opts.forceConflicts ? 'true' : 'false',
        fieldValidation: w.fieldValidation,
      },
    });
  }
  // As kubectl's diff: the manifest as it is, without a new last-applied annotation.
  const annotation = lastAppliedAnnotation(w.discovery.naming);
  const modified = withoutLastApplied(o.obj as JsonObject, annotation);
  const query = {
    dryRun: 'All',
    fieldManager: inv.opts.fieldManager ?? fieldManagerFor('client-side-apply'),
    fieldValidation: w.fieldValidation,
  };
  if (!c.live)
    return w.session.call<Obj>('POST', resourcePath(o.resource, { namespace: o.namespace }), { body: o.obj, query });
  const schema = await builtinSchema(o.resource);
  const patch = threeWayMergePatch({ original: lastAppliedOf(c.live, annotation), modified, current: c.live, schema });
  if (Object.keys(patch).length === 0) return c.live;
  return w.session.call<Obj>('PATCH', path, {
    body: patch,
    contentType: schema ? 'application/strategic-merge-patch+json' : 'application/merge-patch+json',
    query,
  });
}

function runDiff(o: { cmd: string; live: string; merged: string; io: Invocation<unknown>['io'] }): Promise<number> {
  return new Promise((resolve, reject) => {
    const parts = o.cmd.split(/\s+/).filter((x) => x);
    const child = spawn(parts[0] ?? 'diff', [...parts.slice(1), o.live, o.merged], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: o.io.env,
    });
    child.stdout.on('data', (d: Buffer) => o.io.out(d.toString('utf8')));
    child.stderr.on('data', (d: Buffer) => o.io.err(d.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => resolve(code ?? 2));
  });
}

/**
 * `diff -f`: the live objects against what applying the manifests would make of them (a
 * server-side dry run), as `diff -u -N` of two directories (or `SVCCTL_EXTERNAL_DIFF` /
 * `KUBECTL_EXTERNAL_DIFF`). Exit 0 without differences, 1 with, above 1 on errors.
 */
export async function run(inv: Invocation<DiffOptions>): Promise<void> {
  const w = await openManifestWrite(inv, { verb: 'diff' });
  // Two temporary directories named as kubectl names them (`LIVE-...`, `MERGED-...`).
  const liveDir = await mkdtemp(join(tmpdir(), 'LIVE-'));
  const mergedDir = await mkdtemp(join(tmpdir(), 'MERGED-'));
  try {
    for (const o of w.objects) {
      let live: JsonObject | undefined;
      try {
        live = await w.session.call<JsonObject>(
          'GET',
          resourcePath(o.resource, { namespace: o.namespace, name: o.name }),
        );
      } catch (e) {
        if (statusOf(e)?.reason !== 'NotFound') throw e;
      }
      let after: Obj;
      try {
        after = await merged(inv, { w, o, live });
      } catch (e) {
        throw withSource(e, { verb: 'diffing', source: o.source });
      }
      let a: Obj | undefined = live as Obj | undefined;
      let b: Obj | undefined = after;
      if (!inv.opts.showManagedFields) {
        a = withoutManagedFields(a);
        b = withoutManagedFields(b);
      }
      if (o.resource.kind === 'Secret' && o.resource.group === '') {
        a = a ? JSON.parse(JSON.stringify(a)) : a;
        b = JSON.parse(JSON.stringify(b)) as Obj;
        maskSecrets(a, b);
      }
      // An object not there yet has no LIVE file, but a Secret (kubectl's masker writes it as `null`).
      const secret = o.resource.kind === 'Secret' && o.resource.group === '';
      if (a || secret) await writeFile(join(liveDir, fileName(o)), a ? toYaml(a) : 'null\n');
      await writeFile(join(mergedDir, fileName(o)), toYaml(b));
    }
    const cmd = inv.io.env.SVCCTL_EXTERNAL_DIFF || inv.io.env.KUBECTL_EXTERNAL_DIFF || 'diff -u -N';
    const code = await runDiff({ cmd, live: liveDir, merged: mergedDir, io: inv.io });
    if (code > 1) throw new CliError(`diff exited with status ${code}`, code + 1);
    if (code === 1) inv.fail(1);
  } finally {
    w.session.close();
    await rm(liveDir, { recursive: true, force: true });
    await rm(mergedDir, { recursive: true, force: true });
  }
}
