import type { Invocation } from '../invocation.js';
import { resourcePath } from '../discovery.js';
import { withSource } from '../errors.js';
import { lastAppliedAnnotation, withLastApplied } from '../last-applied.js';
import { openManifestWrite, report, type ManifestWriteOptions } from '../manifest-writes.js';
import type { ApiObjectJson } from '../objects.js';
import { fieldManagerFor, writeQuery } from '../write-options.js';

export interface CreateOptions extends ManifestWriteOptions {
  saveConfig?: boolean;
}

/** `create -f`: POSTs every object of the manifests; failures are reported and the rest still created. */
export async function run(inv: Invocation<CreateOptions>): Promise<void> {
  const w = await openManifestWrite(inv, { verb: 'create', allowGenerateName: true });
  const { session, discovery } = w;
  try {
    for (const o of w.objects) {
      let obj = o.obj;
      if (inv.opts.saveConfig) obj = withLastApplied(obj as never, lastAppliedAnnotation(discovery.naming));
      if (w.dryRun === 'client') {
        w.printer.print(obj as ApiObjectJson, { resource: o.resource, verb: 'created' });
        continue;
      }
      try {
        const created = await session.call<ApiObjectJson>(
          'POST',
          resourcePath(o.resource, { namespace: o.namespace }),
          {
            body: obj,
            query: writeQuery({
              dryRun: w.dryRun,
              fieldManager: inv.opts.fieldManager ?? fieldManagerFor('create'),
              fieldValidation: w.fieldValidation,
            }),
          },
        );
        w.printer.print(created, { resource: o.resource, verb: 'created' });
      } catch (e) {
        report(inv, withSource(e, { verb: 'creating', source: o.source }));
      }
    }
    w.printer.finish();
  } finally {
    session.close();
  }
}
