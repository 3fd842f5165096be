import { CliError } from './errors.js';
import { resourcePath, type Discovery, type ServedResource } from './discovery.js';
import { parseTargets } from './get-targets.js';
import { readManifests } from './manifests.js';
import { resolveObjects } from './resolve-objects.js';
import type { Session } from './session.js';
import type { SvcctlIo } from './io.js';
import { objectsOfList, type ApiObjectJson } from './objects.js';

/** One object a command acts on. */
export interface ObjectRef {
  resource: ServedResource;
  name: string;
  namespace?: string;
  /** Where it was named (a manifest's path), for messages. */
  source?: string;
}

export interface RefOptions {
  filename?: string[];
  recursive?: boolean;
  selector?: string;
  fieldSelector?: string;
  all?: boolean;
  allNamespaces?: boolean;
}

/** kubectl's example list when a command got no resources. */
export const NO_RESOURCES = `You must provide one or more resources by argument or filename.
Example resource specifications include:
   '-f rsrc.yaml'
   '--filename=rsrc.json'
   '<resource> <name>'
   '<resource>'`;

/**
 * The objects a command line names: `-f` manifests, `TYPE NAME...`, `TYPE/NAME...`, or every
 * object of the types that `-l`, `--field-selector` or `--all` select (listed, in `-A` all
 * namespaces). Types without names or a selector are refused, as kubectl does.
 */
export async function objectRefs(
  args: string[],
  o: RefOptions & { session: Session; discovery: Discovery; io: SvcctlIo; cli: string },
): Promise<ObjectRef[]> {
  if (o.filename && o.filename.length > 0) {
    const objs = resolveObjects(
      await readManifests(o.filename, { io: o.io, recursive: o.recursive, verb: 'process' }),
      {
        discovery: o.discovery,
        namespace: o.session.namespace,
        explicitNamespace: o.session.explicitNamespace,
      },
    );
    return objs.map((x) => ({ resource: x.resource, name: x.name, namespace: x.namespace, source: x.source }));
  }
  if (args.length === 0) throw new CliError(NO_RESOURCES);
  const targets = parseTargets(args, o.discovery, o.cli);
  const out: ObjectRef[] = [];
  for (const t of targets) {
    const ns = t.resource.namespaced ? o.session.namespace : undefined;
    if (t.names) {
      if (o.selector || o.all) throw new CliError('name cannot be provided when a selector is specified');
      for (const name of t.names) out.push({ resource: t.resource, name, namespace: ns });
      continue;
    }
    if (!o.selector && !o.fieldSelector && !o.all) {
      throw new CliError('resource(s) were provided, but no name was specified');
    }
    const list = await o.session.call<ApiObjectJson>(
      'GET',
      resourcePath(t.resource, { namespace: o.allNamespaces ? undefined : ns }),
      { query: { labelSelector: o.selector, fieldSelector: o.fieldSelector } },
    );
    for (const obj of objectsOfList(list)) {
      out.push({
        resource: t.resource,
        name: obj.metadata?.name ?? '',
        namespace: t.resource.namespaced ? obj.metadata?.namespace : undefined,
      });
    }
  }
  return out;
}
