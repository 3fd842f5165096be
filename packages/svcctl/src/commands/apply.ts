import type { Invocation } from '../invocation.js';
import { resourcePath, type Discovery } from '../discovery.js';
import { statusOf, withSource } from '../errors.js';
import { lastAppliedAnnotation, lastAppliedOf, withLastApplied } from '../last-applied.js';
import { openManifestWrite, report, type ManifestWrite, type ManifestWriteOptions } from '../manifest-writes.js';
import type { ApiObjectJson } from '../objects.js';
import { builtinSchema } from '../patch-schema.js';
import type { ResolvedObject } from '../resolve-objects.js';
import { threeWayMergePatch, type JsonObject } from '../three-way-patch.js';
import { applyFieldManager, fieldManagerFor, writeQuery } from '../write-options.js';
import { CliError } from '../errors.js';

export interface ApplyOptions extends ManifestWriteOptions {
  serverSide?: boolean;
  forceConflicts?: boolean;
  force?: boolean;
  overwrite?: boolean;
  prune?: boolean;
}

const MAX_CONFLICT_RETRIES = 5;

/** kubectl's explanation after an apply conflict. */
const CONFLICT_HELP = `Please review the fields above--they currently have other managers. Here
are the ways you can resolve this warning:
* If you intend to manage all of these fields, please re-run the apply
  command with the \`--force-conflicts\` flag.
* If you do not intend to manage all of the fields, please edit your
  manifest to remove references to the fields that should keep their
  current managers.
* You may co-own fields by updating your manifest to match the existing
  value; in this case, you'll become the manager if the other manager(s)
  stop managing the field (remove it from their configuration).
See https://kubernetes.io/docs/reference/using-api/server-side-apply/#conflicts`;

/** `apply -f`: client-side (last-applied annotation and a three-way patch) or `--server-side`. */
export async function run(inv: Invocation<ApplyOptions>): Promise<void> {
  if (inv.opts.prune) throw new CliError('--prune is not supported by svcctl yet');
  if (inv.opts.forceConflicts && !inv.opts.serverSide)
    throw new CliError('--force-conflicts only works with --server-side');
  const w = await openManifestWrite(inv, { verb: 'apply', asList: true });
  try {
    for (const o of w.objects) {
      try {
        if (inv.opts.serverSide) await serverSide(inv, { w, o });
        else await clientSide(inv, { w, o });
      } catch (e) {
        const s = statusOf(e);
        if (inv.opts.serverSide && s?.reason === 'Conflict' && s.details?.causes?.length) {
          report(inv, new CliError(`${s.message ?? ''}\n${CONFLICT_HELP}`));
        } else {
          report(inv, inv.opts.serverSide ? withSource(e, { verb: 'patching', source: o.source }) : e);
        }
      }
    }
    w.printer.finish();
  } finally {
    w.session.close();
  }
}

async function serverSide(inv: Invocation<ApplyOptions>, c: { w: ManifestWrite; o: ResolvedObject }): Promise<void> {
  const { w, o } = c;
  const body = { ...o.obj };
  if (w.dryRun === 'client') {
    w.printer.print(body as ApiObjectJson, { resource: o.resource, verb: 'serverside-applied' });
    return;
  }
  const applied = await w.session.call<ApiObjectJson>(
    'PATCH',
    resourcePath(o.resource, { namespace: o.namespace, name: o.name }),
    {
      body,
      contentType: 'application/apply-patch+yaml',
      query: {
        ...writeQuery({
          dryRun: w.dryRun,
          fieldManager: inv.opts.fieldManager ?? applyFieldManager(),
          fieldValidation: w.fieldValidation,
        }),
        force: inv.opts.forceConflicts ? 'true' : 'false',
      },
    },
  );
  w.printer.print(applied, { resource: o.resource, verb: 'serverside-applied' });
}

async function patchFor(o: ResolvedObject, c: { discovery: Discovery; current: JsonObject; modified: JsonObject }) {
  const annotation = lastAppliedAnnotation(c.discovery.naming);
  const schema = await builtinSchema(o.resource);
  const patch = threeWayMergePatch({
    original: lastAppliedOf(c.current, annotation),
    modified: c.modified,
    current: c.current,
    schema,
  });
  return { patch, type: schema ? 'application/strategic-merge-patch+json' : 'application/merge-patch+json' };
}

/** kubectl's message for a failed GET of the live object. */
function retrievalError(e: unknown, o: ResolvedObject): unknown {
  const r = o.resource;
  const gv = `${r.group}/${r.version}`;
  return withSource(e, {
    verb: `retrieving current configuration of:\nResource: "${gv}, Resource=${r.resource}", GroupVersionKind: "${gv}, Kind=${r.kind}"\nName: "${o.name}", Namespace: "${o.namespace ?? ''}"\nfrom server for:`,
    source: o.source,
  });
}

async function clientSide(inv: Invocation<ApplyOptions>, c: { w: ManifestWrite; o: ResolvedObject }): Promise<void> {
  const { w, o } = c;
  const path = resourcePath(o.resource, { namespace: o.namespace, name: o.name });
  const modified = withLastApplied(o.obj as JsonObject, lastAppliedAnnotation(w.discovery.naming));
  const manager = inv.opts.fieldManager ?? fieldManagerFor('client-side-apply');
  for (let attempt = 0; ; attempt++) {
    let current: JsonObject | undefined;
    try {
      current = await w.session.call<JsonObject>('GET', path);
    } catch (e) {
      if (statusOf(e)?.reason !== 'NotFound') throw retrievalError(e, o);
    }
    if (!current) {
      if (w.dryRun === 'client') {
        w.printer.print(modified as ApiObjectJson, { resource: o.resource, verb: 'created' });
        return;
      }
      const created = await w.session
        .call<ApiObjectJson>('POST', resourcePath(o.resource, { namespace: o.namespace }), {
          body: modified,
          query: writeQuery({ dryRun: w.dryRun, fieldManager: manager, fieldValidation: w.fieldValidation }),
        })
        .catch((e: unknown) => {
          throw withSource(e, { verb: 'creating', source: o.source });
        });
      w.printer.print(created, { resource: o.resource, verb: 'created' });
      return;
    }
    const { patch, type } = await patchFor(o, { discovery: w.discovery, current, modified });
    if (Object.keys(patch).length === 0) {
      w.printer.print(current as ApiObjectJson, { resource: o.resource, verb: 'unchanged' });
      return;
    }
    if (w.dryRun === 'client') {
      w.printer.print(current as ApiObjectJson, { resource: o.resource, verb: 'configured' });
      return;
    }
    try {
      const patched = await w.session.call<ApiObjectJson>('PATCH', path, {
        body: patch,
        contentType: type,
        query: writeQuery({ dryRun: w.dryRun, fieldManager: manager, fieldValidation: w.fieldValidation }),
      });
      w.printer.print(patched, { resource: o.resource, verb: 'configured' });
      return;
    } catch (e) {
      if (statusOf(e)?.reason !== 'Conflict' || attempt >= MAX_CONFLICT_RETRIES) {
        throw withSource(e, { verb: 'patching', source: o.source });
      }
    }
  }
}
