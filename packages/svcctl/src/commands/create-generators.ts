import { readFileSync, readdirSync, statSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import type { Invocation } from '../invocation.js';
import { Session } from '../session.js';
import { resourcePath, type Discovery, type ServedResource } from '../discovery.js';
import { CliError, statusOf } from '../errors.js';
import { lastAppliedAnnotation, withLastApplied } from '../last-applied.js';
import { report, writeFormat } from '../manifest-writes.js';
import { ResultPrinter } from '../printers/results.js';
import type { ApiObjectJson } from '../objects.js';
import { dryRunSuffix, fieldManagerFor, parseDryRun, parseValidate, writeQuery } from '../write-options.js';
import type { JsonObject } from '../three-way-patch.js';

export interface GeneratorOptions {
  output?: string;
  dryRun?: string | boolean;
  validate?: string | boolean;
  fieldManager?: string;
  saveConfig?: boolean;
  fromLiteral?: string[];
  fromFile?: string[];
  fromEnvFile?: string[];
  type?: string;
  image?: string[];
  replicas?: string;
  port?: string;
  verb?: string[];
  resource?: string[];
  resourceName?: string[];
  role?: string;
  clusterrole?: string;
  user?: string[];
  group?: string[];
  serviceaccount?: string[];
}

type Generator = (c: {
  name: string;
  o: GeneratorOptions;
  discovery: Discovery;
  namespace?: string;
  cwd: string;
  err: (s: string) => void;
}) => {
  resource: ServedResource;
  obj: JsonObject;
};

function meta(name: string, namespace: string | undefined, extra: JsonObject = {}): JsonObject {
  return { creationTimestamp: null, ...extra, name, ...(namespace ? { namespace } : {}) };
}

/** `--from-literal`, `--from-file` and `--from-env-file` data, as kubectl reads them (`binaryData` for non-UTF-8 files). */
function dataFrom(o: GeneratorOptions, cwd: string): { data: Record<string, string>; binary: Record<string, string> } {
  const data: Record<string, string> = {};
  const binary: Record<string, string> = {};
  const put = (key: string, value: Buffer | string): void => {
    if (Object.hasOwn(data, key) || Object.hasOwn(binary, key)) {
      throw new CliError(
        `cannot add key ${key}, another key by that name already exists in data: ${JSON.stringify(data)}`,
      );
    }
    if (typeof value === 'string') data[key] = value;
    else {
      const text = value.toString('utf8');
      if (Buffer.from(text, 'utf8').equals(value)) data[key] = text;
      else binary[key] = value.toString('base64');
    }
  };
  for (const lit of o.fromLiteral ?? []) {
    const i = lit.indexOf('=');
    if (i <= 0) throw new CliError(`invalid literal source ${lit}, expected key=value`);
    put(lit.slice(0, i), lit.slice(i + 1));
  }
  for (const spec of o.fromFile ?? []) {
    const i = spec.indexOf('=');
    const key = i > 0 ? spec.slice(0, i) : undefined;
    const path = resolve(cwd, i > 0 ? spec.slice(i + 1) : spec);
    let st;
    try {
      st = statSync(path);
    } catch {
      throw new CliError(`error reading ${path}: no such file or directory`);
    }
    if (st.isDirectory()) {
      if (key) throw new CliError(`cannot give a key name for a directory path`);
      for (const f of readdirSync(path).sort()) {
        const p = join(path, f);
        if (statSync(p).isFile()) put(f, readFileSync(p));
      }
    } else put(key ?? basename(path), readFileSync(path));
  }
  for (const file of o.fromEnvFile ?? []) {
    for (const line of readFileSync(resolve(cwd, file), 'utf8').split('\n')) {
      const l = line.trim();
      if (!l || l.startsWith('#')) continue;
      const i = l.indexOf('=');
      if (i < 0) put(l, process.env[l] ?? '');
      else put(l.slice(0, i), l.slice(i + 1));
    }
  }
  return { data, binary };
}

const VALID_VERBS = [
  '*',
  'get',
  'delete',
  'list',
  'create',
  'update',
  'patch',
  'watch',
  'proxy',
  'deletecollection',
  'use',
  'bind',
  'escalate',
  'impersonate',
];

/** Verbs that apply only to some resources (kubectl's specialVerbs), with the server's group spelling. */
function specialVerbs(discovery: Discovery): Record<string, Array<{ group: string; resource: string }>> {
  const rbac = discovery.group('rbac.authorization');
  return {
    use: [
      { group: 'policy', resource: 'podsecuritypolicies' },
      { group: 'extensions', resource: 'podsecuritypolicies' },
    ],
    bind: [
      { group: rbac, resource: 'roles' },
      { group: rbac, resource: 'clusterroles' },
    ],
    escalate: [
      { group: rbac, resource: 'roles' },
      { group: rbac, resource: 'clusterroles' },
    ],
    impersonate: [
      { group: '', resource: 'users' },
      { group: '', resource: 'serviceaccounts' },
      { group: '', resource: 'groups' },
      { group: discovery.group('authentication'), resource: 'userextras' },
    ],
  };
}

/** `--resource` entries to policy rules, one per API group in group order, as kubectl builds them. */
function rulesFor(o: GeneratorOptions, discovery: Discovery, err: (s: string) => void): JsonObject[] {
  const verbs = o.verb ?? [];
  if (verbs.length === 0) throw new CliError('at least one verb must be specified');
  for (const v of verbs) if (!VALID_VERBS.includes(v)) err(`Warning: '${v}' is not a standard resource verb\n`);
  const resources = o.resource ?? [];
  if (resources.length === 0) throw new CliError('at least one resource must be specified');
  const special = specialVerbs(discovery);
  const byGroup = new Map<string, string[]>();
  let validated = false;
  for (const spec of resources) {
    const [res = '', sub] = spec.split('/', 2);
    if (!res) throw new CliError('resource must be specified if apiGroup/subresource specified');
    const dot = res.indexOf('.');
    let group = dot >= 0 ? res.slice(dot + 1) : '';
    let plural = dot >= 0 ? res.slice(0, dot) : res;
    const found = res === '*' ? undefined : discovery.find(res);
    if (found) {
      group = found.group;
      plural = found.resource;
    }
    if (res === '*') validated = true;
    if (!validated) {
      let matched = false;
      for (const v of verbs) {
        const allowed = special[v];
        if (!allowed) continue;
        if (!allowed.some((a) => a.group === group && a.resource === plural)) {
          throw new CliError(`can not perform '${v}' on '${plural}' in group '${group}'`);
        }
        matched = true;
      }
      if (!found && !matched) throw new CliError(`the server doesn't have a resource type "${plural}"`, 1, true);
    }
    const name = sub ? `${plural}/${sub}` : plural;
    const list = byGroup.get(group) ?? [];
    if (!list.includes(name)) list.push(name);
    byGroup.set(group, list);
  }
  return [...byGroup.keys()].sort().map((group) => {
    const rule: JsonObject = { apiGroups: [group], resources: byGroup.get(group) ?? [], verbs };
    if (o.resourceName?.length) rule.resourceNames = o.resourceName;
    return rule;
  });
}

/** Subjects of a binding from `--user`, `--group`, `--serviceaccount`. */
function subjectsFor(o: GeneratorOptions, rbac: string): JsonObject[] {
  const out: JsonObject[] = [];
  for (const u of o.user ?? []) out.push({ apiGroup: rbac, kind: 'User', name: u });
  for (const g of o.group ?? []) out.push({ apiGroup: rbac, kind: 'Group', name: g });
  for (const sa of o.serviceaccount ?? []) {
    const [ns, name] = sa.split(':', 2);
    if (!ns || !name) throw new CliError(`serviceaccount must be <namespace>:<name>`);
    out.push({ kind: 'ServiceAccount', name, namespace: ns });
  }
  return out;
}

/** A container name from an image reference, as kubectl derives it (`docker.io/library/nginx:1.27` → `nginx`). */
export function containerNameOf(image: string): string {
  const noDigest = image.split('@')[0] ?? image;
  const last = noDigest.split('/').pop() ?? noDigest;
  const name = last.split(':')[0] ?? last;
  return name
    .toLowerCase()
    .replace(/[^a-z0-9-]/g, '-')
    .replace(/^-+|-+$/g, '');
}

const core = (discovery: Discovery, resource: string): ServedResource => discovery.builtin({ group: '', resource });

export const GENERATORS: Record<string, Generator> = {
  namespace: ({ name, discovery }) => ({
    resource: core(discovery, 'namespaces'),
    obj: { apiVersion: 'v1', kind: 'Namespace', metadata: meta(name, undefined), spec: {}, status: {} },
  }),
  serviceaccount: ({ name, discovery, namespace }) => ({
    resource: core(discovery, 'serviceaccounts'),
    obj: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: meta(name, namespace) },
  }),
  configmap: ({ name, o, discovery, namespace, cwd }) => {
    const { data, binary } = dataFrom(o, cwd);
    const obj: JsonObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: meta(name, namespace) };
    if (Object.keys(binary).length > 0) obj.binaryData = binary;
    if (Object.keys(data).length > 0) obj.data = data;
    return { resource: core(discovery, 'configmaps'), obj };
  },
  'secret generic': ({ name, o, discovery, namespace, cwd }) => {
    const { data, binary } = dataFrom(o, cwd);
    const encoded: Record<string, string> = { ...binary };
    for (const [k, v] of Object.entries(data)) encoded[k] = Buffer.from(v, 'utf8').toString('base64');
    const obj: JsonObject = { apiVersion: 'v1', kind: 'Secret', metadata: meta(name, namespace) };
    if (Object.keys(encoded).length > 0) obj.data = encoded;
    if (o.type) obj.type = o.type;
    return { resource: core(discovery, 'secrets'), obj };
  },
  deployment: ({ name, o, discovery, namespace }) => {
    const images = o.image ?? [];
    if (images.length === 0) throw new CliError('required flag(s) "image" not set');
    const replicas = o.replicas === undefined ? 1 : Number(o.replicas);
    const labels = { app: name };
    const containers = images.map((image, i) => {
      const c: JsonObject = { image, name: containerNameOf(image), resources: {} };
      if (o.port !== undefined && i === 0) c.ports = [{ containerPort: Number(o.port) }];
      return c;
    });
    return {
      resource: discovery.builtin({ group: 'apps', resource: 'deployments' }),
      obj: {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: meta(name, namespace, { labels }),
        spec: {
          replicas,
          selector: { matchLabels: labels },
          strategy: {},
          template: { metadata: { creationTimestamp: null, labels }, spec: { containers } },
        },
        status: {},
      },
    };
  },
  role: ({ name, o, discovery, namespace, err }) => {
    const rbac = discovery.group('rbac.authorization');
    return {
      resource: discovery.builtin({ group: rbac, resource: 'roles' }),
      obj: {
        apiVersion: `${rbac}/v1`,
        kind: 'Role',
        metadata: meta(name, namespace),
        rules: rulesFor(o, discovery, err),
      },
    };
  },
  clusterrole: ({ name, o, discovery, err }) => {
    const rbac = discovery.group('rbac.authorization');
    return {
      resource: discovery.builtin({ group: rbac, resource: 'clusterroles' }),
      obj: {
        apiVersion: `${rbac}/v1`,
        kind: 'ClusterRole',
        metadata: meta(name, undefined),
        rules: rulesFor(o, discovery, err),
      },
    };
  },
  rolebinding: ({ name, o, discovery, namespace }) => {
    const rbac = discovery.group('rbac.authorization');
    if (!!o.role === !!o.clusterrole) throw new CliError('exactly one of clusterrole or role must be specified');
    const obj: JsonObject = {
      apiVersion: `${rbac}/v1`,
      kind: 'RoleBinding',
      metadata: meta(name, namespace),
      roleRef: { apiGroup: rbac, kind: o.role ? 'Role' : 'ClusterRole', name: o.role ?? o.clusterrole ?? '' },
    };
    const subjects = subjectsFor(o, rbac);
    if (subjects.length > 0) obj.subjects = subjects;
    return { resource: discovery.builtin({ group: rbac, resource: 'rolebindings' }), obj };
  },
  clusterrolebinding: ({ name, o, discovery }) => {
    const rbac = discovery.group('rbac.authorization');
    if (!o.clusterrole) throw new CliError('required flag(s) "clusterrole" not set');
    const obj: JsonObject = {
      apiVersion: `${rbac}/v1`,
      kind: 'ClusterRoleBinding',
      metadata: meta(name, undefined),
      roleRef: { apiGroup: rbac, kind: 'ClusterRole', name: o.clusterrole },
    };
    const subjects = subjectsFor(o, rbac);
    if (subjects.length > 0) obj.subjects = subjects;
    return { resource: discovery.builtin({ group: rbac, resource: 'clusterrolebindings' }), obj };
  },
};

/** kubectl's wording of a failed create, per generator (namespace, role and clusterrole print the server's error). */
const FAILURE_PREFIX: Record<string, string> = {
  serviceaccount: 'failed to create serviceaccount: ',
  configmap: 'failed to create configmap: ',
  'secret generic': 'failed to create secret ',
  deployment: 'failed to create deployment: ',
  rolebinding: 'failed to create rolebinding: ',
  clusterrolebinding: 'failed to create clusterrolebinding: ',
};

/** `create <kind> NAME [flags]`: builds the object kubectl would build and creates it (or prints it). */
export async function runGenerator(inv: Invocation<GeneratorOptions>, which: string): Promise<void> {
  const { opts, io } = inv;
  const name = inv.args[0];
  if (!name) throw new CliError(`NAME is required for ${which}`);
  const dryRun = parseDryRun(opts.dryRun);
  const level = parseValidate(opts.validate);
  const printer = new ResultPrinter(io, { format: writeFormat(opts.output), suffix: dryRunSuffix(dryRun) });
  const session = Session.open(inv.globals, io);
  try {
    const discovery = await session.discovery();
    const gen = GENERATORS[which];
    if (!gen) throw new CliError(`unknown generator ${which}`);
    const namespace = session.explicitNamespace ? session.namespace : undefined;
    const { resource, obj } = gen({
      name,
      o: opts,
      discovery,
      namespace,
      cwd: io.cwd ?? process.cwd(),
      err: (t) => io.err(t),
    });
    const shown = opts.saveConfig ? withLastApplied(obj, lastAppliedAnnotation(discovery.naming)) : obj;
    if (dryRun === 'client') {
      printer.print(shown as ApiObjectJson, { resource, verb: 'created' });
      return;
    }
    // kubectl prints the zero creationTimestamps of the objects it builds but does not send them.
    const body = JSON.parse(
      JSON.stringify(shown)
        .replace(/"creationTimestamp":null,?/g, '')
        .replace(/,}/g, '}'),
    ) as JsonObject;
    try {
      const created = await session.call<ApiObjectJson>(
        'POST',
        resourcePath(resource, { namespace: resource.namespaced ? session.namespace : undefined }),
        {
          body,
          query: writeQuery({
            dryRun,
            fieldManager: opts.fieldManager ?? fieldManagerFor('create'),
            fieldValidation: level,
          }),
        },
      );
      printer.print(created, { resource, verb: 'created' });
    } catch (e) {
      const prefix = FAILURE_PREFIX[which];
      report(inv, prefix && statusOf(e) ? new CliError(`${prefix}${statusOf(e)?.message ?? ''}`) : e);
    }
  } finally {
    session.close();
  }
}
