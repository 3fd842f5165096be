import { CliError } from './errors.js';
import type { Discovery, ServedResource } from './discovery.js';

/** What one `get`-like command line names: a resource type and, optionally, objects of it. */
export interface Target {
  resource: ServedResource;
  /** Undefined: the whole collection. */
  names?: string[];
}

/**
 * kubectl's resource arguments: `TYPE[,TYPE...] [NAME...]` or `TYPE/NAME...`; several types
 * in one argument, categories (`all`) expanded. Consecutive names of one type stay together.
 */
export function parseTargets(args: string[], discovery: Discovery, cli: string): Target[] {
  const slashed = args.filter((a) => a.includes('/')).length;
  if (slashed > 0 && slashed !== args.length) {
    throw new CliError(
      `there is no need to specify a resource type as a separate argument when passing arguments in resource/name form (e.g. '${cli} get resource/<resource_name>' instead of '${cli} get resource resource/<resource_name>'`,
    );
  }
  if (slashed > 0) {
    const out: Target[] = [];
    for (const a of args) {
      const i = a.indexOf('/');
      const type = a.slice(0, i);
      const name = a.slice(i + 1);
      if (!type || !name) throw new CliError(`arguments in resource/name form must have a single resource and name`);
      for (const r of discovery.resolve(type)) {
        const last = out[out.length - 1];
        if (last && last.resource === r && last.names) last.names.push(name);
        else out.push({ resource: r, names: [name] });
      }
    }
    return out;
  }
  const [types = '', ...names] = args;
  const seen = new Set<ServedResource>();
  const out: Target[] = [];
  for (const t of types.split(',').filter((x) => x !== '')) {
    for (const r of discovery.resolve(t)) {
      if (seen.has(r)) continue;
      seen.add(r);
      out.push({ resource: r, names: names.length > 0 ? [...names] : undefined });
    }
  }
  return out;
}

/** Did the command line name more than one resource type (kubectl then prints `kind/name`). */
export function multipleTypes(targets: Target[]): boolean {
  return new Set(targets.map((t) => t.resource)).size > 1;
}
