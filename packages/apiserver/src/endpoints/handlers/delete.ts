import { badRequest, type DeleteOptions } from '@svc/api';
import type { HandlerScope } from './scope.js';
import { answer } from './respond.js';
import { readJsonValue } from './decode.js';
import { optionalBool, readListParams } from './list-params.js';

/** DeleteOptions from the body (optional) and the query (gracePeriodSeconds, propagationPolicy, orphanDependents). */
async function deleteOptions(s: HandlerScope): Promise<DeleteOptions> {
  let opts: DeleteOptions = {};
  const hasBody =
    Number(s.req.headers['content-length'] ?? '0') > 0 || s.req.headers['transfer-encoding'] !== undefined;
  if (hasBody) {
    const { value } = await readJsonValue(s);
    if (typeof value !== 'object' || value === null || Array.isArray(value))
      throw badRequest('the body of a delete request must be a DeleteOptions object');
    const kind = (value as { kind?: unknown }).kind;
    if (kind !== undefined && kind !== 'DeleteOptions')
      throw badRequest(`the kind in the data (${String(kind)}) does not match the expected kind (DeleteOptions)`);
    opts = value as DeleteOptions;
  }
  const grace = s.query.get('gracePeriodSeconds');
  if (grace !== null && grace !== '') {
    if (!/^-?\d+$/.test(grace)) throw badRequest(`invalid value for gracePeriodSeconds: ${JSON.stringify(grace)}`);
    opts.gracePeriodSeconds = Number(grace);
  }
  const policy = s.query.get('propagationPolicy');
  if (policy) opts.propagationPolicy = policy as DeleteOptions['propagationPolicy'];
  const orphan = optionalBool(s.query, 'orphanDependents');
  if (orphan !== undefined) opts.orphanDependents = orphan;
  if (opts.propagationPolicy && !['Orphan', 'Background', 'Foreground'].includes(opts.propagationPolicy)) {
    throw badRequest(
      `propagationPolicy: Unsupported value: ${JSON.stringify(opts.propagationPolicy)}: supported values: "Foreground", "Background", "Orphan"`,
    );
  }
  if (opts.propagationPolicy && opts.orphanDependents !== undefined) {
    throw badRequest('orphanDependents: Invalid value: orphanDependents and propagationPolicy cannot both be set');
  }
  if (opts.gracePeriodSeconds !== undefined && typeof opts.gracePeriodSeconds !== 'number')
    throw badRequest('gracePeriodSeconds must be an integer');
  // kubectl sends dry run in the body (DeleteOptions.dryRun); the query parameter is the other way.
  if (opts.dryRun !== undefined) {
    if (!Array.isArray(opts.dryRun) || opts.dryRun.some((v) => v !== 'All' && v !== '')) {
      throw badRequest(`Invalid dry run value: ${JSON.stringify(opts.dryRun)}, supported values are: All`);
    }
    if (opts.dryRun.includes('All')) s.ctx.dryRun = true;
  }
  return opts;
}

export async function handleDelete(s: HandlerScope): Promise<void> {
  const opts = await deleteOptions(s);
  const { object, deleted } = await s.store.delete(s.info.namespace, s.info.name, { ctx: s.ctx, options: opts });
  const body = deleted && !s.store.returnsDeletedObject ? s.store.deletedStatus(object) : object;
  answer(s, deleted || opts.orphanDependents !== false ? 200 : 202, body);
}

export async function handleDeleteCollection(s: HandlerScope): Promise<void> {
  const opts = await deleteOptions(s);
  const params = readListParams(s.query, s.resource);
  const list = await s.store.deleteCollection(s.info.namespace, { ctx: s.ctx, list: params, options: opts });
  answer(s, 200, list);
}
