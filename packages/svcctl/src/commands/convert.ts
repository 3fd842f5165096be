import type { Invocation } from '../invocation.js';
import { apiVersionOf, resourcePath } from '../discovery.js';
import { CliError, statusOf } from '../errors.js';
import { Session } from '../session.js';
import { readManifests } from '../manifests.js';
import { resolveObjects } from '../resolve-objects.js';
import { asList as listOf } from '../printers/objects.js';
import { toJson, toYaml } from '../printers/json-yaml.js';
import { JsonPathTemplate } from '../printers/jsonpath.js';
import type { JsonObject } from '../three-way-patch.js';

export interface ConvertOptions {
  filename?: string[];
  recursive?: boolean;
  outputVersion?: string;
  output?: string;
  local?: boolean;
}

/** What only the server sets, removed from a converted object. */
function clean(obj: JsonObject, name: string): JsonObject {
  const meta = { ...((obj.metadata ?? {}) as JsonObject) };
  for (const k of [
    'uid',
    'resourceVersion',
    'creationTimestamp',
    'generation',
    'managedFields',
    'generateName',
    'selfLink',
  ])
    delete meta[k];
  meta.name = name;
  const out: JsonObject = { ...obj, metadata: meta };
  delete out.status;
  return out;
}

/**
 * The version an object of `group` is converted to: a bare `--output-version` version in the
 * object's own group; a `group/version` one for objects of that group (others are left in
 * their version); none: the group's preferred version.
 */
function targetVersion(
  outputVersion: string | undefined,
  o: { group: string; preferred: string; current: string },
): string {
  if (!outputVersion) return o.preferred;
  const slash = outputVersion.indexOf('/');
  if (slash < 0) return o.group ? `${o.group}/${outputVersion}` : outputVersion;
  return outputVersion.slice(0, slash) === o.group ? outputVersion : o.current;
}

/**
 * `convert -f --output-version`: the objects in another served version of their group,
 * through the server's own conversion: each object is created under a generated name in the
 * source version, read back in the target version and deleted (so converting needs create
 * and delete permission, and admission sees the object). `--local` only rewrites apiVersion
 * (what a conversion without a webhook does).
 */
export async function run(inv: Invocation<ConvertOptions>): Promise<void> {
  const { io, opts } = inv;
  if (!opts.filename?.length) throw new CliError('must specify one of -f and -k');
  const format = opts.output ?? 'yaml';
  const session = Session.open(inv.globals, io);
  try {
    const discovery = await session.discovery();
    const objects = resolveObjects(
      await readManifests(opts.filename, { io, recursive: opts.recursive, verb: 'convert' }),
      {
        discovery,
        namespace: session.namespace,
        explicitNamespace: session.explicitNamespace,
      },
    );
    const out: JsonObject[] = [];
    for (const o of objects) {
      const target = targetVersion(opts.outputVersion, {
        group: o.resource.group,
        preferred: apiVersionOf(discovery.resolve(`${o.resource.resource}.${o.resource.group}`)[0] ?? o.resource),
        current: apiVersionOf(o.resource),
      });
      const to = discovery.forKind(target, o.resource.kind);
      if (!to)
        throw new CliError(`${o.resource.kind} in version "${target}" cannot be handled: the server does not serve it`);
      if (to === o.resource || opts.local) {
        out.push({ ...o.obj, apiVersion: target } as JsonObject);
        continue;
      }
      const { name: _name, ...meta } = (o.obj.metadata ?? {}) as JsonObject;
      const temp = await session.call<JsonObject>('POST', resourcePath(o.resource, { namespace: o.namespace }), {
        body: { ...o.obj, metadata: { ...meta, generateName: `${o.name || 'convert'}-svcctl-convert-` } },
        query: { fieldManager: 'svcctl-convert' },
      });
      const tempName = String((temp.metadata as JsonObject).name);
      try {
        const converted = await session.call<JsonObject>(
          'GET',
          resourcePath(to, { namespace: o.namespace, name: tempName }),
        );
        out.push(clean(converted, o.name));
      } finally {
        await session
          .call('DELETE', resourcePath(o.resource, { namespace: o.namespace, name: tempName }), {
            body: {
              kind: 'DeleteOptions',
              apiVersion: 'v1',
              gracePeriodSeconds: 0,
              preconditions: { uid: (temp.metadata as JsonObject).uid },
            },
          })
          .catch((e: unknown) => {
            if (statusOf(e)?.reason !== 'NotFound') throw e;
          });
      }
    }
    const whole = out.length === 1 ? out[0] : listOf(out);
    if (format === 'yaml') io.out(toYaml(whole));
    else if (format === 'json') io.out(toJson(whole));
    else if (format.startsWith('jsonpath=')) io.out(new JsonPathTemplate(format.slice(9)).execute(whole));
    else
      throw new CliError(
        `unable to match a printer suitable for the output format "${format}", allowed formats are: json,jsonpath,yaml`,
      );
  } finally {
    session.close();
  }
}
