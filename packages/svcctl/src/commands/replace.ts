import type { Invocation } from '../invocation.js';
import type { Query } from '../session.js';
import { resourcePath } from '../discovery.js';
import { statusOf, withSource } from '../errors.js';
import { lastAppliedAnnotation, withLastApplied } from '../last-applied.js';
import { openManifestWrite, report, type ManifestWriteOptions } from '../manifest-writes.js';
import type { ApiObjectJson } from '../objects.js';
import { fieldManagerFor, writeQuery } from '../write-options.js';

export interface ReplaceOptions extends ManifestWriteOptions {
  force?: boolean;
  saveConfig?: boolean;
  gracePeriod?: string;
}

/** `replace -f`: PUT of each object (`--force`: delete, wait until gone, create). */
export async function run(inv: Invocation<ReplaceOptions>): Promise<void> {
  const w = await openManifestWrite(inv, { verb: 'replace' });
  const { session } = w;
  const manager = inv.opts.fieldManager ?? fieldManagerFor('replace');
  try {
    for (const o of w.objects) {
      let obj = o.obj;
      const annotation = lastAppliedAnnotation(w.discovery.naming);
      if (inv.opts.saveConfig) obj = withLastApplied(obj as never, annotation);
      const path = resourcePath(o.resource, { namespace: o.namespace, name: o.name });
      const query = writeQuery({ dryRun: w.dryRun, fieldManager: manager, fieldValidation: w.fieldValidation });
      try {
        if (w.dryRun === 'client') {
          w.printer.print(obj as ApiObjectJson, { resource: o.resource, verb: 'replaced' });
          continue;
        }
        if (inv.opts.force) {
          await forceReplace(inv, { w, o: { ...o, obj }, query });
          continue;
        }
        const replaced = await session.call<ApiObjectJson>('PUT', path, { body: obj, query }).catch((e: unknown) => {
          throw withSource(e, { verb: 'replacing', source: o.source });
        });
        w.printer.print(replaced, { resource: o.resource, verb: 'replaced' });
      } catch (e) {
        report(inv, e);
      }
    }
    w.printer.finish();
  } finally {
    session.close();
  }
}

async function forceReplace(
  inv: Invocation<ReplaceOptions>,
  c: {
    w: Awaited<ReturnType<typeof openManifestWrite>>;
    o: Awaited<ReturnType<typeof openManifestWrite>>['objects'][number];
    query: Query;
  },
): Promise<void> {
  const { w, o } = c;
  const path = resourcePath(o.resource, { namespace: o.namespace, name: o.name });
  const kind = o.resource.group
    ? `${o.resource.kind.toLowerCase()}.${o.resource.group}`
    : o.resource.kind.toLowerCase();
  try {
    const body: Record<string, unknown> = { kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy: 'Background' };
    if (inv.opts.gracePeriod !== undefined && Number(inv.opts.gracePeriod) >= 0)
      body.gracePeriodSeconds = Number(inv.opts.gracePeriod);
    await w.session.call('DELETE', path, { body, query: { dryRun: c.query.dryRun } });
    inv.io.out(`${kind} "${o.name}" deleted\n`);
  } catch (e) {
    if (statusOf(e)?.reason !== 'NotFound') throw e;
  }
  const deadline = Date.now() + 60_000;
  while (w.dryRun === 'none' && Date.now() < deadline) {
    try {
      await w.session.call('GET', path);
      await new Promise((r) => setTimeout(r, 100));
    } catch (e) {
      if (statusOf(e)?.reason === 'NotFound') break;
      throw e;
    }
  }
  const { resourceVersion: _rv, uid: _uid, ...meta } = (o.obj.metadata ?? {}) as Record<string, unknown>;
  const created = await w.session
    .call<ApiObjectJson>('POST', resourcePath(o.resource, { namespace: o.namespace }), {
      body: { ...o.obj, metadata: meta },
      query: c.query,
    })
    .catch((e: unknown) => {
      throw withSource(e, { verb: 'creating', source: o.source });
    });
  w.printer.print(created, { resource: o.resource, verb: 'replaced' });
}
