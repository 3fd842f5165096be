import { CliError } from '../errors.js';
import type { Invocation } from '../invocation.js';
import { Session } from '../session.js';
import { apiVersionOf, type ServedResource } from '../discovery.js';
import { tabwrite } from '../printers/tabwriter.js';

export interface ApiResourcesOptions {
  output?: string;
  apiGroup?: string;
  namespaced?: boolean;
  verbs?: string[];
  sortBy?: string;
  categories?: string[];
  headers?: boolean;
}

/** kubectl's order: by group (or `--sort-by` name|kind), then by name. */
function sorted(list: ServedResource[], by: string | undefined): ServedResource[] {
  const key = (r: ServedResource): string => (by === 'name' ? r.resource : by === 'kind' ? r.kind : r.group);
  return [...list].sort((a, b) => {
    const c = key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0;
    if (c !== 0) return c;
    return a.resource < b.resource ? -1 : a.resource > b.resource ? 1 : 0;
  });
}

export async function run(inv: Invocation<ApiResourcesOptions>): Promise<void> {
  const { opts, io, args } = inv;
  if (args.length > 0) throw new CliError(`unexpected arguments: ${JSON.stringify(args)}`);
  if (opts.output && !['wide', 'name'].includes(opts.output)) {
    throw new CliError(`--output ${opts.output} is not available`);
  }
  if (opts.sortBy && !['name', 'kind'].includes(opts.sortBy)) {
    throw new CliError(`--sort-by accepts only name or kind`);
  }
  const session = Session.open(inv.globals, io);
  try {
    const discovery = await session.discovery();
    let list = discovery.preferredResources();
    if (opts.apiGroup !== undefined) list = list.filter((r) => r.group === opts.apiGroup);
    if (opts.namespaced !== undefined) list = list.filter((r) => r.namespaced === opts.namespaced);
    if (opts.verbs?.length) list = list.filter((r) => opts.verbs?.every((v) => r.verbs.includes(v)));
    if (opts.categories?.length) list = list.filter((r) => opts.categories?.every((c) => r.categories.includes(c)));
    list = sorted(list, opts.sortBy);
    if (opts.output === 'name') {
      io.out(list.map((r) => `${r.group ? `${r.resource}.${r.group}` : r.resource}\n`).join(''));
      return;
    }
    const wide = opts.output === 'wide';
    const lines: string[] = [];
    if (opts.headers !== false) {
      lines.push(
        ['NAME', 'SHORTNAMES', 'APIVERSION', 'NAMESPACED', 'KIND', ...(wide ? ['VERBS', 'CATEGORIES'] : [])].join('\t'),
      );
    }
    for (const r of list) {
      const cells = [r.resource, r.shortNames.join(','), apiVersionOf(r), String(r.namespaced), r.kind];
      if (wide) cells.push(r.verbs.join(','), r.categories.join(','));
      lines.push(cells.join('\t'));
    }
    io.out(tabwrite(lines.map((l) => `${l}\n`).join('')));
  } finally {
    session.close();
  }
}
