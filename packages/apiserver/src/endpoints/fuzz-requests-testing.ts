/**
 * Hostile requests for the front-door fuzzer (front-door.fuzz.int.test.ts): a seeded PRNG of
 * our own and one generator per family of abuse. Request `i` of seed `s` depends on `(s, i)`
 * alone, so any request of a run can be rebuilt and sent again by its index.
 */
import YAML from 'yaml';
import { NAMINGS, naming, type ObjectSchema, type ResourceType, type Schema } from '@svc/api';
import { encodeProtobufObject, PROTOBUF_MAGIC } from '@svc/machinery';

/** sfc32 seeded through splitmix32: small, fast, and the same on every machine. */
export class Prng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(seed: number, stream = 0) {
    let s = (seed ^ Math.imul(stream + 1, 0x9e3779b9)) >>> 0;
    const mix = (): number => {
      s = (s + 0x9e3779b9) >>> 0;
      let z = s;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
      return (z ^ (z >>> 16)) >>> 0;
    };
    this.a = mix();
    this.b = mix();
    this.c = mix();
    this.d = mix();
    for (let i = 0; i < 12; i++) this.next();
  }

  /** A uint32. */
  next(): number {
    const t = (((this.a + this.b) >>> 0) + this.d) >>> 0;
    this.d = (this.d + 1) >>> 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) >>> 0;
    this.c = ((this.c << 21) | (this.c >>> 11)) >>> 0;
    this.c = (this.c + t) >>> 0;
    return t;
  }

  /** In [0, 1). */
  float(): number {
    return this.next() / 0x1_0000_0000;
  }

  /** An integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.float() * n);
  }

  /** An integer in [lo, hi]. */
  range(lo: number, hi: number): number {
    return lo + this.int(hi - lo + 1);
  }

  chance(p: number): boolean {
    return this.float() < p;
  }

  pick<T>(xs: readonly T[]): T {
    if (xs.length === 0) throw new Error('pick from an empty list');
    return xs[this.int(xs.length)] as T;
  }

  /** One of `entries` with probability proportional to its weight. */
  weighted<T>(entries: ReadonlyArray<readonly [T, number]>): T {
    const total = entries.reduce((n, [, w]) => n + w, 0);
    let x = this.float() * total;
    for (const [v, w] of entries) {
      x -= w;
      if (x < 0) return v;
    }
    return (entries[entries.length - 1] as readonly [T, number])[0];
  }

  bytes(n: number): Buffer {
    const b = Buffer.alloc(n);
    for (let i = 0; i < n; i++) b[i] = this.next() & 0xff;
    return b;
  }
}

/** One request to send, and what it is for the report. */
export interface FuzzRequest {
  index: number;
  /** The generator that made it (failures are grouped by it). */
  family: string;
  /** One line saying what was sent, for the report. */
  summary: string;
  method: string;
  path: string;
  headers: Record<string, string | string[]>;
  body?: Buffer;
  /** Send the body with chunked transfer encoding (no Content-Length). */
  chunked?: boolean;
}

/** What the generators aim at. */
export interface FuzzTarget {
  /** The namespace namespaced requests go to (it exists). */
  namespace: string;
  /** Object names requests use, so that reads and writes meet objects that exist. */
  names: readonly string[];
  /** The catalog: every built-in kind. */
  resources: readonly ResourceType[];
  /** Admin bearer token. */
  token: string;
}

// ---------------------------------------------------------------------------------------------
// JSON values with duplicate keys and raw literals

/** Extra entries of an object, written after its own (duplicate keys). */
const DUPS = Symbol('duplicates');
type Obj = { [k: string]: Value; [DUPS]?: Array<[string, Value]> };
/** Text written verbatim in place of a value (number literals JSON cannot hold, deep nesting). */
class Raw {
  constructor(readonly text: string) {}
}
type Value = null | boolean | number | string | Raw | Value[] | Obj;

const isObj = (v: Value | undefined): v is Obj =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Raw);

/** JSON text of a value; duplicate keys and raw literals as they are. */
export function jsonText(v: Value): string {
  if (v instanceof Raw) return v.text;
  if (Array.isArray(v)) return `[${v.map(jsonText).join(',')}]`;
  if (isObj(v)) {
    const entries: Array<[string, Value]> = [...Object.entries(v), ...(v[DUPS] ?? [])];
    return `{${entries.map(([k, x]) => `${JSON.stringify(k)}:${jsonText(x)}`).join(',')}}`;
  }
  if (typeof v === 'number' && !Number.isFinite(v)) return 'null';
  return JSON.stringify(v);
}

/** YAML text of a value without raw literals or duplicates (those go as JSON, which YAML also reads). */
function yamlText(v: Value): string {
  if (hasRawOrDups(v)) return jsonText(v);
  return YAML.stringify(v, { aliasDuplicateObjects: false });
}

function hasRawOrDups(v: Value): boolean {
  if (v instanceof Raw) return true;
  if (Array.isArray(v)) return v.some(hasRawOrDups);
  if (isObj(v)) return (v[DUPS]?.length ?? 0) > 0 || Object.values(v).some(hasRawOrDups);
  return false;
}

// ---------------------------------------------------------------------------------------------
// Paths

function groupPrefix(r: Pick<ResourceType, 'group' | 'version'>): string {
  return r.group ? `/apis/${r.group}/${r.version}` : `/api/${r.version}`;
}

function collectionPath(r: ResourceType, ns: string): string {
  return r.namespaced ? `${groupPrefix(r)}/namespaces/${ns}/${r.plural}` : `${groupPrefix(r)}/${r.plural}`;
}

function objectPath(r: ResourceType, o: { ns: string; name: string; sub?: string }): string {
  return `${collectionPath(r, o.ns)}/${encodeURIComponent(o.name)}${o.sub ? `/${o.sub}` : ''}`;
}

function apiVersionOf(r: Pick<ResourceType, 'group' | 'version'>): string {
  return r.group ? `${r.group}/${r.version}` : r.version;
}

// ---------------------------------------------------------------------------------------------
// Valid-looking bodies from the schema, and a few hand-made realistic ones

const WORDS = ['a', 'web', 'app', 'x-1', 'nginx', 'busybox', 'TCP', 'http', 'main', 'default', 'v1', 'true'];

function sampleString(rnd: Prng, s: Extract<Schema, { type: 'string' }>): string {
  if (s.enum && s.enum.length > 0) return rnd.pick(s.enum);
  if (s.format === 'date-time') return rnd.pick(['2024-01-02T03:04:05Z', '2030-12-31T23:59:59.123456Z']);
  if (s.format === 'byte') return rnd.bytes(rnd.range(0, 12)).toString('base64');
  return rnd.chance(0.7) ? rnd.pick(WORDS) : randomAscii(rnd, rnd.range(1, 12));
}

function randomAscii(rnd: Prng, n: number): string {
  let out = '';
  for (let i = 0; i < n; i++) out += String.fromCharCode(rnd.pick([rnd.range(97, 122), rnd.range(48, 57), 45]));
  return out;
}

/** A value of `schema` (random optional fields, bounded depth). */
function sampleValue(rnd: Prng, schema: Schema, depth: number): Value {
  switch (schema.type) {
    case 'string':
      return sampleString(rnd, schema);
    case 'integer':
      return rnd.range(0, 100);
    case 'number':
      return rnd.float() * 100;
    case 'boolean':
      return rnd.chance(0.5);
    case 'int-or-string':
      if (schema.format === 'quantity') return rnd.pick(['100m', '1Gi', '2', 3]);
      return rnd.chance(0.5) ? rnd.range(1, 65535) : rnd.pick(['http', '50%']);
    case 'any':
      return schema.format === 'json-bytes' ? {} : rnd.pick<Value>([{ a: 'b' }, 'x', 1, [1, 'two']]);
    case 'map': {
      const out: Obj = {};
      for (let i = rnd.int(depth > 3 ? 1 : 3); i > 0; i--)
        out[rnd.pick(['app', 'k1', 'tier', 'x.io/y'])] = sampleValue(rnd, schema.values, depth + 1);
      return out;
    }
    case 'array': {
      if (depth > 4) return [];
      const out: Value[] = [];
      for (let i = rnd.int(3); i > 0; i--) out.push(sampleValue(rnd, schema.items, depth + 1));
      return out;
    }
    case 'object':
      return sampleObject(rnd, schema, depth);
  }
}

function sampleObject(rnd: Prng, schema: ObjectSchema, depth: number): Obj {
  const out: Obj = {};
  for (const [k, s] of Object.entries(schema.properties)) {
    const required = schema.required?.includes(k) ?? false;
    if (required || (depth < 5 && rnd.chance(depth === 0 ? 0.5 : 0.25))) out[k] = sampleValue(rnd, s, depth + 1);
  }
  return out;
}

/** Bodies that pass validation for some kinds, so that mutations reach the later stages too. */
function realisticBody(kind: string, name: string): Obj | undefined {
  const labels = { app: 'fuzz' };
  const template = {
    metadata: { labels },
    spec: { containers: [{ name: 'c', image: 'busybox', command: ['sleep', '1000'] }] },
  };
  switch (kind) {
    case 'ConfigMap':
      return { data: { a: '1', 'b.txt': 'hello' } };
    case 'Secret':
      return { type: 'Opaque', data: { a: 'MQ==' }, stringData: { b: 'two' } };
    case 'Pod':
      return { spec: template.spec };
    case 'Deployment':
    case 'ReplicaSet':
      return { spec: { replicas: 1, selector: { matchLabels: labels }, template } };
    case 'Service':
      return { spec: { selector: labels, ports: [{ port: 80, targetPort: 8080, protocol: 'TCP' }] } };
    case 'Lease':
      return { spec: { holderIdentity: 'me', leaseDurationSeconds: 15 } };
    case 'Role':
    case 'ClusterRole':
      return { rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list'] }] };
    case 'RoleBinding':
    case 'ClusterRoleBinding':
      return {
        roleRef: { apiGroup: `rbac.authorization.${naming().groupSuffix}`, kind: 'ClusterRole', name: 'view' },
        subjects: [{ kind: 'User', name: 'fuzz', apiGroup: `rbac.authorization.${naming().groupSuffix}` }],
      };
    case 'ServiceAccount':
    case 'Namespace':
    case 'Node':
      return {};
    case 'SelfSubjectAccessReview':
      return { spec: { resourceAttributes: { verb: 'get', resource: 'pods', namespace: 'default' } } };
    case 'SelfSubjectReview':
      return {};
    default:
      return name ? undefined : undefined;
  }
}

/** A whole object of kind `r` named `name` that looks valid (realistic or schema-random). */
function sampleBody(rnd: Prng, r: ResourceType, opts: { ns: string; name: string }): Obj {
  const schema = r.schema as ObjectSchema;
  const real = rnd.chance(0.6) ? realisticBody(r.kind, opts.name) : undefined;
  const rest = real ?? sampleObject(rnd, schema, 0);
  delete rest.apiVersion;
  delete rest.kind;
  const metadata: Obj = { name: opts.name };
  if (r.namespaced && rnd.chance(0.5)) metadata.namespace = opts.ns;
  if (rnd.chance(0.4)) metadata.labels = { app: 'fuzz', n: String(rnd.int(10)) };
  if (rnd.chance(0.2)) metadata.annotations = { note: 'fuzzed' };
  return { apiVersion: apiVersionOf(r), kind: r.kind, metadata, ...rest };
}

// ---------------------------------------------------------------------------------------------
// Mutations

const ODD_KEYS = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf', '', ' ', '$patch', 'a.b', '💥'];

const ODD_STRINGS = [
  '',
  ' ',
  '\u0000',
  '\ud800',
  '\udfff\ud800',
  '\uffff',
  '\u202e\u0645\u0631\u062d\u0628\u0627',
  'ñame-☃-𝒳',
  '\u200b\u200d\ufeff',
  '../../etc/passwd',
  '%00%2F',
  '${jndi:x}',
  '\\"\'\n\r\t',
  'null',
  '1e309',
  '-0',
  'true',
  '0x1F',
];

/** Number literals outside what the types hold (written raw: JSON.stringify cannot). */
const ODD_NUMBERS = [
  '1e308',
  '-1e308',
  '1e400',
  '-1e400',
  '9223372036854775807',
  '9223372036854775808',
  '-9223372036854775809',
  '18446744073709551616',
  '123456789012345678901234567890',
  '2147483648',
  '-2147483649',
  '9007199254740993',
  '1.5',
  '-0',
  '0.0000000000000000000000000001',
  '1e-400',
  '4.9e-324',
];

function oddScalar(rnd: Prng): Value {
  switch (rnd.int(6)) {
    case 0:
      return rnd.pick(ODD_STRINGS);
    case 1:
      return new Raw(rnd.pick(ODD_NUMBERS));
    case 2:
      return randomUnicode(rnd, rnd.range(1, 40));
    case 3:
      return rnd.pick<Value>([true, false, null, 0, -1]);
    case 4:
      return hugeString(rnd);
    default:
      return rnd.pick<Value>([{}, [], [null], { '': '' }]);
  }
}

function randomUnicode(rnd: Prng, n: number): string {
  let out = '';
  for (let i = 0; i < n; i++) {
    const cp = rnd.weighted<number>([
      [rnd.range(0x20, 0x7e), 4],
      [rnd.range(0, 0x1f), 1],
      [rnd.range(0x80, 0x7ff), 2],
      [rnd.range(0x800, 0xffff), 2],
      [rnd.range(0x10000, 0x10ffff), 1],
    ]);
    out += String.fromCodePoint(cp);
  }
  return out;
}

function hugeString(rnd: Prng): string {
  return rnd.pick(['x', 'é', '😀', 'ab\\']).repeat(rnd.pick([10_000, 100_000, 700_000]));
}

/** Paths to every value in `v` (as key lists), up to a bound. */
function valuePaths(
  v: Value,
  prefix: Array<string | number> = [],
  out: Array<Array<string | number>> = [],
): Array<Array<string | number>> {
  if (out.length > 400) return out;
  out.push(prefix);
  if (Array.isArray(v)) v.forEach((x, i) => valuePaths(x, [...prefix, i], out));
  else if (isObj(v)) for (const [k, x] of Object.entries(v)) valuePaths(x, [...prefix, k], out);
  return out;
}

function getAt(v: Value, path: ReadonlyArray<string | number>): Value | undefined {
  let cur: Value | undefined = v;
  for (const p of path) {
    if (Array.isArray(cur) && typeof p === 'number') cur = cur[p];
    else if (isObj(cur) && typeof p === 'string') cur = Object.hasOwn(cur, p) ? cur[p] : undefined;
    else return undefined;
  }
  return cur;
}

function setAt(root: Value, path: ReadonlyArray<string | number>, value: Value | undefined): Value {
  if (path.length === 0) return value ?? null;
  const parent = getAt(root, path.slice(0, -1));
  const last = path[path.length - 1] as string | number;
  if (Array.isArray(parent) && typeof last === 'number') {
    if (value === undefined) parent.splice(last, 1);
    else parent[last] = value;
  } else if (isObj(parent) && typeof last === 'string') {
    if (value === undefined) delete parent[last];
    else Object.defineProperty(parent, last, { value, enumerable: true, writable: true, configurable: true });
  }
  return root;
}

/** One random change of a value: type swaps, deletions, duplicates, odd scalars, arrays ↔ objects. */
function mutate(rnd: Prng, root: Value): { value: Value; what: string } {
  const paths = valuePaths(root);
  const path = rnd.pick(paths);
  const at = getAt(root, path);
  const where = path.join('.') || '(root)';
  switch (rnd.int(9)) {
    case 0: // type swap
      return { value: setAt(root, path, swapType(rnd, at)), what: `type swap at ${where}` };
    case 1:
      return { value: setAt(root, path, undefined), what: `delete ${where}` };
    case 2: {
      // duplicate a key (the parent object gets a second entry of the same name)
      const parent = getAt(root, path.slice(0, -1));
      const key = path[path.length - 1];
      if (isObj(parent) && typeof key === 'string') {
        (parent[DUPS] ??= []).push([key, rnd.chance(0.5) ? structuredCloneValue(at ?? null) : oddScalar(rnd)]);
        return { value: root, what: `duplicate ${where}` };
      }
      return { value: setAt(root, path, oddScalar(rnd)), what: `odd scalar at ${where}` };
    }
    case 3:
      return { value: setAt(root, path, oddScalar(rnd)), what: `odd scalar at ${where}` };
    case 4: // arrays ↔ objects
      if (Array.isArray(at)) {
        const o: Obj = {};
        at.forEach((x, i) => (o[String(i)] = x));
        return { value: setAt(root, path, o), what: `array→object at ${where}` };
      }
      if (isObj(at)) return { value: setAt(root, path, Object.values(at)), what: `object→array at ${where}` };
      return { value: setAt(root, path, [at ?? null]), what: `scalar→array at ${where}` };
    case 5: {
      // an odd key in an object
      const target = isObj(at) ? at : undefined;
      if (target) {
        const key = rnd.pick(ODD_KEYS);
        Object.defineProperty(target, key, {
          value: oddScalar(rnd),
          enumerable: true,
          writable: true,
          configurable: true,
        });
        return { value: root, what: `odd key ${JSON.stringify(key)} in ${where}` };
      }
      return { value: setAt(root, path, randomUnicode(rnd, 20)), what: `unicode at ${where}` };
    }
    case 6:
      return { value: setAt(root, path, new Raw(rnd.pick(ODD_NUMBERS))), what: `number ${where}` };
    case 7: {
      // apiVersion / kind / name oddities
      const field = rnd.pick(['apiVersion', 'kind']);
      if (isObj(root)) root[field] = oddScalar(rnd);
      return { value: root, what: `odd ${field}` };
    }
    default: {
      if (isObj(root) && isObj(root.metadata)) {
        root.metadata.name = rnd.pick<Value>([
          '',
          'a'.repeat(300),
          'UPPER',
          '..',
          'a/b',
          'ñ',
          '-x-',
          1,
          null,
          { a: 1 },
        ]);
        return { value: root, what: 'odd metadata.name' };
      }
      return { value: setAt(root, path, hugeString(rnd)), what: `huge string at ${where}` };
    }
  }
}

function structuredCloneValue(v: Value): Value {
  if (v instanceof Raw) return v;
  if (Array.isArray(v)) return v.map(structuredCloneValue);
  if (isObj(v)) {
    const o: Obj = {};
    for (const [k, x] of Object.entries(v))
      Object.defineProperty(o, k, {
        value: structuredCloneValue(x),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    return o;
  }
  return v;
}

function swapType(rnd: Prng, v: Value | undefined): Value {
  const options: Value[] = ['str', 42, -7.5, true, null, [], {}, [{ a: 1 }], { nested: { deeper: ['x'] } }];
  const different = options.filter((o) => typeof o !== typeof v || Array.isArray(o) !== Array.isArray(v));
  return rnd.pick(different.length > 0 ? different : options);
}

// ---------------------------------------------------------------------------------------------
// Content types, accepts, queries, paths

const JSON_TYPE = 'application/json';
const YAML_TYPE = 'application/yaml';
const MERGE_PATCH = 'application/merge-patch+json';
const STRATEGIC_PATCH = 'application/strategic-merge-patch+json';
const JSON_PATCH = 'application/json-patch+json';
const APPLY_PATCH = 'application/apply-patch+yaml';

function protobufType(rnd: Prng): string {
  return rnd.chance(0.7) ? naming().protobufMediaType : 'application/vnd.kubernetes.protobuf';
}

function oddContentType(rnd: Prng): string {
  return rnd.pick([
    'text/plain',
    'text/html; charset=utf-8',
    'application/json; charset=utf-16',
    'application/json; charset=latin1',
    'application/json;charset="utf-8"',
    'application/json; charset=',
    'application/json;;;',
    'application/json; q=0',
    'APPLICATION/JSON',
    'Application/Yaml',
    'application/x-yaml',
    'text/yaml',
    'application/x-www-form-urlencoded',
    'multipart/form-data; boundary=----x',
    'application/octet-stream',
    'application/*',
    '*/*',
    '',
    ' ',
    ';',
    '/',
    'application/',
    'json',
    'application/json, application/yaml',
    'application/json\u00ff',
    'application/merge-patch+json',
    'application/apply-patch+yaml',
    `${NAMINGS.svc.protobufMediaType};charset=utf-8`,
    `${NAMINGS.kubernetes.protobufMediaType};stream=watch`,
    `application/json; ${'p=v;'.repeat(500)}`,
    'a'.repeat(3000),
  ]);
}

/** An Accept header: mostly JSON, often YAML or Protobuf (errors come back in it), sometimes odd. */
function acceptHeader(rnd: Prng): string | undefined {
  return rnd.weighted<string | undefined>([
    [undefined, 40],
    [JSON_TYPE, 15],
    [YAML_TYPE, 12],
    [protobufType(rnd), 12],
    [`${protobufType(rnd)}, ${JSON_TYPE}`, 4],
    [
      rnd.pick([
        '*/*',
        'application/*',
        'text/html',
        'image/png',
        `application/json;as=Table;g=meta.${NAMINGS.svc.groupSuffix};v=v1`,
        `application/json;as=Table;g=meta.${NAMINGS.kubernetes.groupSuffix};v=v1, application/json`,
        `application/json;as=PartialObjectMetadataList;g=meta.${NAMINGS.svc.groupSuffix};v=v1`,
        'application/json;as=Nonsense;g=x;v=v9',
        `application/yaml;as=Table;g=meta.${NAMINGS.svc.groupSuffix};v=v1`,
        `${naming().protobufMediaType};as=Table;g=meta.${NAMINGS.svc.groupSuffix};v=v1`,
        'application/json;q=abc',
        'application/json;q=0, application/yaml;q=0',
        'application/yaml;q=0.5, application/json;q=0.1',
        ';;;,,,',
        '',
        'application/json;q=1e400',
        `${'application/x-foo, '.repeat(300)}application/yaml`,
        `application/json;as=toString;g=meta.${NAMINGS.svc.groupSuffix};v=v1`,
        'application/json;__proto__=x;constructor=y',
      ]),
      17,
    ],
  ]);
}

const QUERY_PARAMS = [
  'resourceVersion',
  'resourceVersionMatch',
  'limit',
  'continue',
  'fieldSelector',
  'labelSelector',
  'watch',
  'timeoutSeconds',
  'dryRun',
  'fieldManager',
  'fieldValidation',
  'propagationPolicy',
  'gracePeriodSeconds',
  'orphanDependents',
  'allowWatchBookmarks',
  'sendInitialEvents',
  'force',
  'pretty',
  'includeObject',
  'container',
  'follow',
  'tailLines',
  'limitBytes',
  'sinceSeconds',
];

const GARBAGE_VALUES = [
  '',
  ' ',
  '-1',
  '0',
  '1',
  '1.5',
  '+1',
  '1e3',
  '0x10',
  '99999999999999999999999',
  '9223372036854775808',
  '18446744073709551615',
  'NaN',
  'Infinity',
  'true',
  'false',
  'null',
  'undefined',
  '__proto__',
  '%',
  '%%%',
  '٣',
  '１',
  '\u0000',
  'ñ☃',
  '[]',
  '{}',
  'a=b=c',
  '!!',
  'All',
  'Strict',
  'Orphan',
];

function garbageSelector(rnd: Prng): string {
  return rnd.pick([
    'a in (',
    'a in (b,',
    'a notin ()',
    '!',
    '!!a',
    'a,,b',
    '=',
    '==',
    'a=b=c',
    'a!=',
    ',',
    'a in (b))',
    `${'('.repeat(5000)}`,
    `a in (${'x,'.repeat(3000)}x)`,
    'metadata.name==',
    'metadata.name=a,metadata.name=b',
    'spec.nodeName=x',
    'status.phase in (Running)',
    'involvedObject.kind=Pod',
    '\\',
    'a=\\x',
    'a=b\\,c',
    'a.b.c/d=e',
    `${'k'.repeat(400)}=v`,
    'x=ñ',
    'a>1',
    'a<b',
    'a gt 1',
    'metadata.namespace!=default',
  ]);
}

function garbageContinue(rnd: Prng): string {
  const b64 = (o: unknown): string => Buffer.from(JSON.stringify(o)).toString('base64url');
  const v = `meta.${naming().groupSuffix}/v1`;
  return rnd.pick([
    'not-a-token!!',
    '',
    'e30',
    b64({ v, rv: 1e300, start: 'x', r: 'core/configmaps' }),
    // An rv past 2^53 (written as text: a JS number cannot hold it).
    Buffer.from(`{"v":"${v}","rv":9007199254740993,"start":"x","r":"core/configmaps"}`).toString('base64url'),
    b64({ v, rv: -1, start: '../../x', r: 'core/configmaps' }),
    b64({ v, rv: 5, start: 'a\u0000b', r: 'core/configmaps' }),
    b64({ v, rv: 5, start: { a: 1 }, r: 'core/configmaps' }),
    b64({ v, rv: '5', start: 'x', r: 'core/configmaps' }),
    b64({ v, rv: 1.5, start: 'x', r: 'core/configmaps' }),
    b64([1, 2, 3]),
    b64('string'),
    b64(null),
    Buffer.from('\u00ff\u00fe garbage').toString('base64'),
    'a'.repeat(6000),
  ]);
}

function garbageQueryValue(rnd: Prng, param: string): string {
  if (param === 'labelSelector' || param === 'fieldSelector') return garbageSelector(rnd);
  if (param === 'continue') return garbageContinue(rnd);
  if (rnd.chance(0.1)) return randomUnicode(rnd, rnd.range(1, 30));
  if (rnd.chance(0.05)) return 'x'.repeat(rnd.pick([300, 5000]));
  return rnd.pick(GARBAGE_VALUES);
}

/** Percent-encoding of the UTF-8 bytes (lone surrogates go as U+FFFD, where encodeURIComponent throws). */
function pct(s: string): string {
  let out = '';
  for (const b of Buffer.from(s, 'utf8')) {
    const c = String.fromCharCode(b);
    out += /[A-Za-z0-9\-_.~]/.test(c) ? c : `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** 1–4 query parameters with garbage values (sometimes repeated), percent-encoded. */
function garbageQuery(rnd: Prng): string {
  const parts: string[] = [];
  for (let n = rnd.range(1, 4); n > 0; n--) {
    const p = rnd.chance(0.95) ? rnd.pick(QUERY_PARAMS) : randomUnicode(rnd, 5);
    const repeat = rnd.chance(0.1) ? 2 : 1;
    for (let i = 0; i < repeat; i++) parts.push(`${pct(p)}=${pct(garbageQueryValue(rnd, p))}`);
  }
  if (rnd.chance(0.1)) parts.push(rnd.pick(['%ZZ=1', '=', '&&&', 'a', 'limit', '%E0%A4%A=x', 'watch=%']));
  return `?${parts.join('&')}`;
}

function oddPath(rnd: Prng, t: FuzzTarget): string {
  const ns = t.namespace;
  const cm = `/api/v1/namespaces/${ns}/configmaps`;
  return rnd.pick([
    `${cm}/a%2Fb`,
    `${cm}/a%2fb/status`,
    `${cm}/..`,
    `${cm}/%2e%2e`,
    `${cm}/.`,
    `/api/v1/namespaces/../namespaces/${ns}/configmaps`,
    `/api/v1/namespaces/${ns}/configmaps/x/..%2f..%2f..%2fsecrets`,
    `/api/v1/namespaces/%2e%2e/configmaps`,
    '/apis/%ZZ',
    '/apis/apps/%ZZ',
    '/apis/%E0%A4%A/v1',
    `/api/v1/namespaces/%ZZ/configmaps`,
    `${cm}/%E0%A4%A`,
    `${cm}/%ED%A0%80`,
    `${cm}/%C0%AF`,
    `${cm}/%00`,
    `${cm}/a%00b`,
    '/openapi/v3/apis/%ZZ',
    '/openapi/v3/%ZZ/%ZZ',
    '/openapi/v2%ZZ',
    '/readyz/%ZZ',
    '/livez/%',
    '/healthz/%E0%A4%A',
    '/version/%ZZ',
    '//api//v1//namespaces',
    `${cm}/`,
    `${cm}//`,
    `${cm}/x/`,
    `${cm}/${'a'.repeat(rnd.pick([254, 300, 4000]))}`,
    `${cm}/${'a'.repeat(rnd.pick([9000, 14000]))}`,
    `${cm}/${encodeURIComponent('ñame-☃-𝒳')}`,
    `/api/v1/namespaces/${encodeURIComponent('ñ')}/configmaps`,
    `${cm}/x;y=z`,
    `${cm}/x:y@z`,
    `${cm}/*`,
    `${cm}/x/y/z/w`,
    `${cm}/x/status`,
    `${cm}/x/scale`,
    `/api/v1/namespaces/${ns}/pods/x/log`,
    `/api/v1/namespaces/${ns}/pods/x/binding`,
    `/api/v1/namespaces/${ns}/pods/x/exec`,
    `/api/v1/namespaces/${ns}/pods/x/proxy/a/b`,
    `/api/v1/namespaces/${ns}/serviceaccounts/x/token`,
    `/api/v1/namespaces/${ns}/finalize`,
    `/api/v1/namespaces/${ns}/status`,
    `/apis/apps/v1/namespaces/${ns}/deployments/x/scale`,
    '/api/v1/nodes/x/proxy',
    `/api${'/x'.repeat(500)}`,
    '/api/v1/namespaces',
    '/api/v1/namespaces/',
    '/apis',
    '/apis/',
    '/api',
    '/api/v99',
    '/apis/apps',
    '/apis/apps/v1',
    '/apis/nosuch.io/v1/things',
    '/metrics',
    '/openapi/v2',
    '/version',
    `/.well-known/openid-configuration`,
    '/%2e%2e/%2e%2e/etc/passwd',
    '/',
    '/?',
    `/api/v1/namespaces/${ns}/configmaps?${'a=b&'.repeat(2000)}`,
    `/api/v1/namespaces/${ns}/configmaps/x?a=%ZZ&b=%`,
  ]);
}

// ---------------------------------------------------------------------------------------------
// Hostile documents

/** The billion-laughs document: each level refers to the one before `fan` times. */
export function yamlAliasBomb(opts: { levels: number; fan: number; key?: string }): string {
  const lines = ['apiVersion: v1', 'kind: ConfigMap', 'metadata:', '  name: bomb', `${opts.key ?? 'data'}:`];
  lines.push(`  l0: &l0 [${Array(opts.fan).fill('"lol"').join(',')}]`);
  for (let i = 1; i < opts.levels; i++)
    lines.push(
      `  l${i}: &l${i} [${Array(opts.fan)
        .fill(`*l${i - 1}`)
        .join(',')}]`,
    );
  return `${lines.join('\n')}\n`;
}

/** `depth` nested arrays or objects, as flow text (JSON, and YAML's flow style). */
export function deepText(depth: number, kind: 'array' | 'object'): string {
  return kind === 'array'
    ? `${'['.repeat(depth)}${']'.repeat(depth)}`
    : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
}

/** YAML block-style nesting (indentation grows: kept to a depth that fits the body limit). */
function deepYamlBlock(depth: number): string {
  let out = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: deep\n  annotations:\n';
  for (let i = 0; i < depth; i++) out += `${' '.repeat(4 + i)}a:\n`;
  return `${out}${' '.repeat(4 + depth)}b: 1\n`;
}

// ---------------------------------------------------------------------------------------------
// The families

type Headers = Record<string, string | string[]>;

interface Built {
  family: string;
  summary: string;
  method: string;
  path: string;
  headers?: Headers;
  body?: string | Buffer;
  chunked?: boolean;
  /** Leave the Accept header alone (the family set it). */
  keepAccept?: boolean;
}

interface Ctx {
  rnd: Prng;
  t: FuzzTarget;
  r: ResourceType;
  name: string;
}

/** A body-carrying verb on `r`: POST to the collection, PUT or PATCH to an object. */
function writeTarget(c: Ctx): { method: string; path: string } {
  const { rnd, r, t, name } = c;
  const canUpdate = r.verbs.includes('update');
  const method = !canUpdate || rnd.chance(0.5) ? 'POST' : rnd.chance(0.6) ? 'PUT' : 'PATCH';
  if (method === 'POST') return { method, path: collectionPath(r, t.namespace) };
  const sub = r.subresources.length > 0 && rnd.chance(0.2) ? rnd.pick(r.subresources) : '';
  return { method, path: objectPath(r, { ns: t.namespace, name, sub }) };
}

function mutatedBody(c: Ctx): Built {
  const { rnd, r, t, name } = c;
  let value: Value = sampleBody(rnd, r, { ns: t.namespace, name });
  const whats: string[] = [];
  for (let n = rnd.range(0, 4); n > 0; n--) {
    const m = mutate(rnd, value);
    value = m.value;
    whats.push(m.what);
  }
  const target = writeTarget(c);
  const yaml = rnd.chance(0.3);
  let contentType = yaml ? YAML_TYPE : JSON_TYPE;
  if (target.method === 'PATCH') contentType = rnd.pick([MERGE_PATCH, STRATEGIC_PATCH, APPLY_PATCH]);
  const text = contentType === APPLY_PATCH || yaml ? yamlText(value) : jsonText(value);
  const query = target.method === 'PATCH' && contentType === APPLY_PATCH ? '?fieldManager=fuzz' : '';
  return {
    family: 'mutated-body',
    summary: `${r.kind} ${contentType}: ${whats.join('; ') || 'unchanged'}`,
    ...target,
    path: target.path + query,
    headers: { 'content-type': contentType },
    body: text,
  };
}

function contentTypes(c: Ctx): Built {
  const { rnd, r, t, name } = c;
  const value = sampleBody(rnd, r, { ns: t.namespace, name });
  const target = writeTarget(c);
  const ct = oddContentType(rnd);
  const body = rnd.pick([
    jsonText(value),
    yamlText(value),
    Buffer.from(jsonText(value), 'utf16le').toString('latin1'),
    `\ufeff${jsonText(value)}`,
    'a=b&c=d',
    '',
  ]);
  return {
    family: 'content-type',
    summary: `${r.kind} ${target.method} with Content-Type ${JSON.stringify(ct.slice(0, 80))}`,
    ...target,
    headers: { 'content-type': ct },
    body: Buffer.from(body, body.startsWith('\ufeff') ? 'utf8' : 'latin1'),
  };
}

function aliasBomb(c: Ctx): Built {
  const { rnd, t } = c;
  const levels = rnd.range(6, 10);
  const fan = rnd.range(6, 10);
  const key = rnd.pick(['data', 'metadata2']);
  let body = yamlAliasBomb({ levels, fan, key });
  if (key === 'metadata2') body = body.replace('metadata2:', 'extra:');
  const cm = `/api/v1/namespaces/${t.namespace}/configmaps`;
  const where = rnd.pick(['create', 'apply', 'update', 'expansion', 'self-alias', 'alias-nesting']);
  if (where === 'self-alias') {
    body = rnd.pick([
      'apiVersion: v1\nkind: ConfigMap\nmetadata: &m {name: self, labels: *m}\n',
      'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: self}\ndata: &d {a: *d}\n',
      '&top {apiVersion: v1, kind: ConfigMap, metadata: {name: self, annotations: *top}}\n',
    ]);
    return {
      family: 'yaml-bomb',
      summary: 'YAML alias inside its own anchor',
      method: 'POST',
      path: cm,
      headers: { 'content-type': YAML_TYPE },
      body,
    };
  }
  if (where === 'alias-nesting') {
    // Each anchor holds the previous one 100 levels down: depth grows with every alias.
    const lines = ['apiVersion: v1', 'kind: ConfigMap', 'metadata: {name: nest}', 'extra:', '  a0: &a0 [x]'];
    const n = rnd.range(2, 20);
    for (let i = 1; i <= n; i++) lines.push(`  a${i}: &a${i} ${'['.repeat(100)}*a${i - 1}${']'.repeat(100)}`);
    return {
      family: 'yaml-bomb',
      summary: `YAML aliases nesting ${n} × 100 levels`,
      method: 'POST',
      path: cm,
      headers: { 'content-type': YAML_TYPE },
      body: `${lines.join('\n')}\n`,
    };
  }
  if (where === 'expansion') {
    // Under any alias limit: one wide anchor referred to a few dozen times.
    const width = rnd.pick([10_000, 40_000]);
    const uses = rnd.range(20, 90);
    body = `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: wide\n  annotations:\n    a: &a [${Array(width).fill('x').join(',')}]\n    b: [${Array(uses).fill('*a').join(',')}]\n`;
    return {
      family: 'yaml-bomb',
      summary: `YAML expansion: ${width} items × ${uses} aliases`,
      method: 'POST',
      path: cm,
      headers: { 'content-type': YAML_TYPE },
      body,
    };
  }
  if (where === 'apply')
    return {
      family: 'yaml-bomb',
      summary: `YAML alias bomb (${levels}×${fan}) as apply patch`,
      method: 'PATCH',
      path: `${cm}/bomb?fieldManager=fuzz`,
      headers: { 'content-type': APPLY_PATCH },
      body,
    };
  if (where === 'update')
    return {
      family: 'yaml-bomb',
      summary: `YAML alias bomb (${levels}×${fan}) on PUT`,
      method: 'PUT',
      path: `${cm}/bomb`,
      headers: { 'content-type': YAML_TYPE },
      body,
    };
  return {
    family: 'yaml-bomb',
    summary: `YAML alias bomb (${levels}×${fan}) on POST`,
    method: 'POST',
    path: cm,
    headers: { 'content-type': YAML_TYPE },
    body,
  };
}

function deepNesting(c: Ctx): Built {
  const { rnd, r, t, name } = c;
  // Far past any limit, and just under the server's (256): those reach the code after decoding.
  const depth = rnd.pick([10_000, 10_000, 50_000, 250, 254]);
  const shape = rnd.pick<'array' | 'object'>(['array', 'object']);
  const deep = deepText(depth, shape);
  const place = rnd.pick(['root', 'annotations', 'field', 'blockYaml', 'fieldsV1']);
  const target = writeTarget(c);
  let contentType = rnd.chance(0.5) ? JSON_TYPE : YAML_TYPE;
  if (target.method === 'PATCH') contentType = rnd.pick([MERGE_PATCH, STRATEGIC_PATCH, JSON_PATCH, APPLY_PATCH]);
  const query = contentType === APPLY_PATCH ? '?fieldManager=fuzz' : '';
  let body: string;
  if (place === 'blockYaml') {
    body = deepYamlBlock(rnd.pick([500, 1000, 2000]));
    contentType = target.method === 'PATCH' ? APPLY_PATCH : YAML_TYPE;
  } else if (place === 'root') {
    body = deep;
  } else {
    const value = sampleBody(rnd, r, { ns: t.namespace, name });
    if (place === 'annotations' && isObj(value.metadata)) value.metadata.annotations = new Raw(deep);
    else if (place === 'fieldsV1' && isObj(value.metadata)) {
      const fields = shape === 'object' ? deepText(depth - 3, 'object').replace(/"a"/g, '"f:a"') : deep;
      value.metadata.managedFields = [
        { manager: 'fuzz', operation: 'Update', fieldsType: 'FieldsV1', fieldsV1: new Raw(fields) },
      ];
    } else {
      const paths = valuePaths(value).filter((p) => p.length > 0);
      setAt(value, rnd.pick(paths.length > 0 ? paths : [['spec']]), new Raw(deep));
    }
    body = jsonText(value);
    if (contentType === JSON_PATCH) body = `[{"op":"add","path":"/metadata/annotations","value":${deep}}]`;
  }
  return {
    family: 'deep-nesting',
    summary: `${r.kind} ${target.method} ${contentType}: ${depth}-deep ${shape} at ${place}`,
    ...target,
    path: target.path + (target.method === 'PATCH' ? query : ''),
    headers: { 'content-type': contentType },
    body,
  };
}

/** A varint of `n` (for hand-made Protobuf fields). */
function varint(n: number): Buffer {
  const out: number[] = [];
  let v = n;
  while (v >= 0x80) {
    out.push((v & 0x7f) | 0x80);
    v = Math.floor(v / 128);
  }
  out.push(v);
  return Buffer.from(out);
}

function lengthDelimited(field: number, bytes: Buffer): Buffer {
  return Buffer.concat([varint((field << 3) | 2), varint(bytes.length), bytes]);
}

function envelope(opts: { apiVersion: string; kind: string; raw: Buffer; encoding?: string }): Buffer {
  const typeMeta = Buffer.concat([
    lengthDelimited(1, Buffer.from(opts.apiVersion)),
    lengthDelimited(2, Buffer.from(opts.kind)),
  ]);
  const parts = [PROTOBUF_MAGIC, lengthDelimited(1, typeMeta), lengthDelimited(2, opts.raw)];
  if (opts.encoding) parts.push(lengthDelimited(3, Buffer.from(opts.encoding)));
  return Buffer.concat(parts);
}

function validProtobuf(c: Ctx): Buffer | undefined {
  const { rnd, r, t, name } = c;
  const body = sampleBody(rnd, r, { ns: t.namespace, name });
  try {
    return encodeProtobufObject(JSON.parse(jsonText(body)) as Record<string, unknown>, r.schema as ObjectSchema, {
      apiVersion: apiVersionOf(r),
      kind: r.kind,
    });
  } catch {
    return undefined;
  }
}

function garbageProtobuf(c: Ctx): Built {
  const { rnd, r } = c;
  const valid = validProtobuf(c) ?? envelope({ apiVersion: apiVersionOf(r), kind: r.kind, raw: Buffer.alloc(0) });
  const how = rnd.pick([
    'random',
    'magic+random',
    'envelope+random raw',
    'truncated',
    'bit flips',
    'huge length',
    'content encoding',
    'nested groups',
    'bad wire type',
    'wrong kind',
    'empty',
    'deep raw message',
    'deep fieldsV1',
  ]);
  let body: Buffer;
  switch (how) {
    case 'random':
      body = rnd.bytes(rnd.range(1, 2000));
      break;
    case 'magic+random':
      body = Buffer.concat([PROTOBUF_MAGIC, rnd.bytes(rnd.range(0, 2000))]);
      break;
    case 'envelope+random raw':
      body = envelope({ apiVersion: apiVersionOf(r), kind: r.kind, raw: rnd.bytes(rnd.range(1, 2000)) });
      break;
    case 'truncated':
      body = valid.subarray(0, rnd.range(0, Math.max(0, valid.length - 1)));
      break;
    case 'bit flips': {
      body = Buffer.from(valid);
      for (let n = rnd.range(1, 12); n > 0; n--) {
        const i = rnd.range(4, Math.max(4, body.length - 1));
        if (i < body.length) body[i] = (body[i] as number) ^ (1 << rnd.int(8));
      }
      break;
    }
    case 'huge length':
      body = envelope({
        apiVersion: apiVersionOf(r),
        kind: r.kind,
        raw: Buffer.concat([Buffer.from([0x0a]), Buffer.from([0xff, 0xff, 0xff, 0xff, 0x0f]), rnd.bytes(20)]),
      });
      break;
    case 'content encoding':
      body = envelope({ apiVersion: apiVersionOf(r), kind: r.kind, raw: rnd.bytes(30), encoding: 'gzip' });
      break;
    case 'nested groups': {
      // Wire type 3 (start group) nested deeply: skipping it recurses.
      const depth = rnd.pick([1000, 20_000]);
      const raw = Buffer.concat([Buffer.alloc(depth, 0x7b), Buffer.alloc(depth, 0x7c)]); // field 15 start/end group
      body = envelope({ apiVersion: apiVersionOf(r), kind: r.kind, raw });
      break;
    }
    case 'bad wire type':
      body = envelope({ apiVersion: apiVersionOf(r), kind: r.kind, raw: Buffer.from([0x0e, 0x01, 0x0f, 0x02]) });
      break;
    case 'wrong kind':
      body = envelope({ apiVersion: 'nonsense/v0', kind: '\u0000', raw: valid.subarray(Math.min(valid.length, 10)) });
      break;
    case 'deep fieldsV1': {
      // metadata.managedFields[0].fieldsV1 holding deeply nested JSON.
      const depth = rnd.pick([250, 10_000]);
      const json = `${'{"f:a":'.repeat(depth)}{}${'}'.repeat(depth)}`;
      const entry = Buffer.concat([
        lengthDelimited(1, Buffer.from('fuzz')),
        lengthDelimited(2, Buffer.from('Update')),
        lengthDelimited(6, Buffer.from('FieldsV1')),
        lengthDelimited(7, lengthDelimited(1, Buffer.from(json))),
      ]);
      const metadata = Buffer.concat([lengthDelimited(1, Buffer.from(c.name)), lengthDelimited(17, entry)]);
      body = envelope({ apiVersion: apiVersionOf(r), kind: r.kind, raw: lengthDelimited(1, metadata) });
      break;
    }
    case 'deep raw message': {
      // metadata (field 1) holding metadata holding ...: nested length-delimited messages.
      let raw: Buffer = Buffer.from([0x0a, 0x00]);
      for (let i = 0; i < 3000; i++) raw = lengthDelimited(1, raw);
      body = envelope({ apiVersion: apiVersionOf(r), kind: r.kind, raw });
      break;
    }
    default:
      body = Buffer.alloc(0);
  }
  const target = writeTarget(c);
  return {
    family: 'protobuf',
    summary: `${r.kind} ${target.method}: ${how} (${body.length} bytes)`,
    method: target.method === 'PATCH' ? 'PUT' : target.method,
    path: target.path,
    headers: { 'content-type': protobufType(rnd) },
    body,
  };
}

const ODD_METHODS = [
  'OPTIONS',
  'TRACE',
  'HEAD',
  'PROPFIND',
  'PROPPATCH',
  'MKCOL',
  'COPY',
  'MOVE',
  'LOCK',
  'UNLOCK',
  'PURGE',
  'SEARCH',
  'REPORT',
  'LINK',
  'UNLINK',
  'QUERY',
  'M-SEARCH',
  'NOTIFY',
  'SUBSCRIBE',
  'ACL',
  'BIND',
  'MKCALENDAR',
  'SOURCE',
  'BREW',
  'FOO',
  'CONNECT',
];

function oddMethod(c: Ctx): Built {
  const { rnd, r, t, name } = c;
  const method = rnd.pick(ODD_METHODS);
  const path = rnd.pick([
    collectionPath(r, t.namespace),
    objectPath(r, { ns: t.namespace, name }),
    '/',
    '/readyz',
    '/apis',
    '/api/v1',
    '/openapi/v2',
    '/version',
    oddPath(rnd, t),
  ]);
  const withBody = method !== 'HEAD' && rnd.chance(0.6);
  const body = withBody ? jsonText(sampleBody(rnd, r, { ns: t.namespace, name })) : undefined;
  return {
    family: 'odd-method',
    summary: `${method} ${path.slice(0, 100)}${body ? ' with a body' : ''}`,
    method,
    path,
    headers: body ? { 'content-type': JSON_TYPE } : {},
    body,
  };
}

function badQuery(c: Ctx): Built {
  const { rnd, r, t, name } = c;
  const named = rnd.chance(0.4);
  const methods = named ? ['GET', 'GET', 'DELETE', 'PUT', 'PATCH', 'HEAD'] : ['GET', 'GET', 'GET', 'DELETE', 'POST'];
  const method = rnd.pick(methods);
  const base = named ? objectPath(r, { ns: t.namespace, name }) : collectionPath(r, t.namespace);
  let query = garbageQuery(rnd);
  // A watch that is valid streams forever: it gets a short server-side timeout unless garbled.
  if (query.includes('watch=') && !query.includes('timeoutSeconds=')) query += '&timeoutSeconds=1';
  const headers: Headers = {};
  let body: string | undefined;
  if (method === 'POST' || method === 'PUT') {
    headers['content-type'] = JSON_TYPE;
    body = jsonText(sampleBody(rnd, r, { ns: t.namespace, name }));
  } else if (method === 'PATCH') {
    headers['content-type'] = MERGE_PATCH;
    body = '{"metadata":{"labels":{"fuzz":"q"}}}';
  }
  return {
    family: 'bad-query',
    summary: `${method} ${base}${query}`.slice(0, 300),
    method,
    path: base + query,
    headers,
    body,
  };
}

function oddPaths(c: Ctx): Built {
  const { rnd, t } = c;
  const path = oddPath(rnd, t);
  const method = rnd.pick(['GET', 'GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD']);
  const body = ['POST', 'PUT', 'PATCH'].includes(method)
    ? '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"}}'
    : undefined;
  const ct = method === 'PATCH' ? MERGE_PATCH : JSON_TYPE;
  return {
    family: 'odd-path',
    summary: `${method} ${path.slice(0, 160)} (${path.length} chars)`,
    method,
    path,
    headers: body ? { 'content-type': ct } : {},
    body,
  };
}

function hugeHeaders(c: Ctx): Built {
  const { rnd, t } = c;
  const path = `/api/v1/namespaces/${t.namespace}/configmaps`;
  const how = rnd.pick([
    'one 20 KiB header',
    'one 12 KiB header',
    'many headers',
    'huge accept',
    'huge user agent',
    'huge authorization',
    'huge content type',
    'conflicting framing',
    'expect continue',
    'odd header bytes',
  ]);
  const headers: Headers = {};
  let body: string | undefined;
  let method = 'GET';
  switch (how) {
    case 'one 20 KiB header':
      headers['x-fuzz'] = 'x'.repeat(20 * 1024);
      break;
    case 'one 12 KiB header':
      headers['x-fuzz'] = 'x'.repeat(12 * 1024);
      break;
    case 'many headers':
      for (let i = 0; i < rnd.pick([100, 1500]); i++) headers[`x-h${i}`] = 'v';
      break;
    case 'huge accept':
      headers.accept = `${'application/x-foo;q=0.1, '.repeat(rnd.pick([200, 1200]))}application/json`;
      break;
    case 'huge user agent':
      method = 'POST';
      headers['user-agent'] = `${'a'.repeat(rnd.pick([200, 10_000]))}/1.0`;
      headers['content-type'] = JSON_TYPE;
      body = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"${c.name}"}}`;
      break;
    case 'huge authorization':
      headers.authorization = `Bearer ${'t'.repeat(rnd.pick([100, 10_000]))}`;
      break;
    case 'huge content type':
      method = 'POST';
      headers['content-type'] = `application/json;${'x=y;'.repeat(rnd.pick([100, 3000]))}`;
      body = '{}';
      break;
    case 'conflicting framing':
      method = 'POST';
      headers['content-type'] = JSON_TYPE;
      headers['transfer-encoding'] = 'chunked';
      headers['content-length'] = '5';
      body = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"${c.name}"}}`;
      break;
    case 'expect continue':
      method = 'POST';
      headers.expect = rnd.pick(['100-continue', '200-ok']);
      headers['content-type'] = JSON_TYPE;
      body = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"${c.name}"}}`;
      break;
    default:
      headers['x-latin1'] = '\u00ff\u00fe\u0080';
      headers['content-type'] = 'application/json; charset=\u00fc';
      method = 'POST';
      body = '{}';
  }
  return {
    family: 'huge-header',
    summary: `${method} ${path}: ${how}`,
    method,
    path,
    headers,
    body,
    keepAccept: how === 'huge accept',
  };
}

function tooLarge(c: Ctx): Built {
  const { rnd, t, r, name } = c;
  const size = 3 * 1024 * 1024 + rnd.pick([1, 1024, 1024 * 1024]);
  const chunked = rnd.chance(0.4);
  const where = rnd.pick(['create', 'update', 'patch', 'get', 'create-only']);
  const filler = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"${name}"},"data":{"big":"${'x'.repeat(size)}"}}`;
  const cm = `/api/v1/namespaces/${t.namespace}/configmaps`;
  const target = {
    create: { method: 'POST', path: collectionPath(r, t.namespace), ct: JSON_TYPE },
    update: { method: 'PUT', path: `${cm}/${name}`, ct: JSON_TYPE },
    patch: { method: 'PATCH', path: `${cm}/${name}`, ct: MERGE_PATCH },
    get: { method: 'GET', path: `${cm}/${name}`, ct: JSON_TYPE },
    'create-only': {
      method: 'POST',
      path: `/apis/authorization.${naming().groupSuffix}/v1/selfsubjectaccessreviews`,
      ct: JSON_TYPE,
    },
  }[where] as { method: string; path: string; ct: string };
  return {
    family: 'too-large',
    summary: `${target.method} ${target.path}: ${filler.length} bytes${chunked ? ' chunked' : ''}`,
    method: target.method,
    path: target.path,
    headers: { 'content-type': target.ct },
    body: filler,
    chunked,
  };
}

function wrongPatches(c: Ctx): Built {
  const { rnd, r, t, name } = c;
  const ct = rnd.pick([JSON_PATCH, MERGE_PATCH, STRATEGIC_PATCH, APPLY_PATCH, JSON_TYPE, YAML_TYPE, protobufType(rnd)]);
  const bodies = [
    '{}',
    '[]',
    'null',
    '1',
    '"x"',
    '[{"op":"add","path":"/metadata/labels/x","value":"y"}]',
    '[{"op":"nonsense","path":"/a"}]',
    '[{"op":"add"}]',
    '[{"op":"add","path":"metadata"}]',
    '[{"op":"add","path":"/metadata/labels/~2","value":1}]',
    '[{"op":"remove","path":""}]',
    '[{"op":"replace","path":"","value":[]}]',
    '[{"op":"replace","path":"","value":null}]',
    '[{"op":"move","path":"/a"}]',
    '[{"op":"copy","from":"/metadata","path":"/metadata/x"}]',
    '[{"op":"move","from":"/metadata","path":"/metadata/a/b"}]',
    '[{"op":"add","path":"/metadata/finalizers/99999999999","value":"x"}]',
    '[{"op":"add","path":"/metadata/finalizers/-","value":"x"}]',
    '[{"op":"add","path":"/metadata/finalizers/01","value":"x"}]',
    '[{"op":"add","path":"/metadata/finalizers/-1","value":"x"}]',
    '[{"op":"test","path":"/metadata/name","value":{"a":1}}]',
    '[{"op":"add","path":"/metadata/__proto__/polluted","value":"yes"}]',
    '[{"op":"add","path":"/__proto__/polluted","value":"yes"}]',
    '[{"op":"add","path":"/constructor/prototype/polluted","value":"yes"}]',
    '[null, 1, "x", []]',
    `[${'{"op":"add","path":"/metadata/labels/a","value":"b"},'.repeat(3000)}{"op":"test","path":"/kind","value":"x"}]`,
    '{"metadata":{"labels":{"a":null}},"spec":null}',
    '{"metadata":null}',
    '{"metadata":{"name":null,"uid":"x","resourceVersion":"abc"}}',
    '{"metadata":{"resourceVersion":"99999999999999999999"}}',
    '{"metadata":{"managedFields":[{}]}}',
    '{"metadata":{"managedFields":[{"manager":1,"operation":"Nope","fieldsV1":"x"}]}}',
    '{"metadata":{"managedFields":{"a":1}}}',
    '{"$patch":"delete"}',
    '{"$patch":"replace","metadata":{"name":"x"}}',
    '{"$patch":"nonsense"}',
    '{"$patch":1}',
    '{"metadata":{"$patch":"delete"}}',
    '{"metadata":{"finalizers":[{"$patch":"delete"}]}}',
    '{"$retainKeys":"x"}',
    '{"spec":{"$retainKeys":[1,2]}}',
    '{"$setElementOrder/finalizers":"x"}',
    '{"metadata":{"$setElementOrder/finalizers":[{"a":1}],"finalizers":["a"]}}',
    '{"metadata":{"$deleteFromPrimitiveList/finalizers":1}}',
    '{"metadata":{"$deleteFromPrimitiveList/finalizers":[{"a":1}]}}',
    '{"spec":{"containers":[{"$patch":"delete"}]}}',
    '{"spec":{"containers":[{"name":null}]}}',
    '{"spec":{"containers":{"name":"c"}}}',
    '{"spec":{"template":{"spec":{"containers":[{"$patch":"replace"}]}}}}',
    '{"spec":{"$setElementOrder/containers":[{"name":"a"},{"name":"a"},{}]}}',
    '{"rules":[{"$patch":"merge"}]}',
    '{"data":{"a":{"b":"c"}}}',
    '{"metadata":{"labels":["a"]}}',
    `apiVersion: v1\nkind: ${r.kind}\nmetadata:\n  name: ${name}\n  managedFields: [{manager: x}]\n`,
    `apiVersion: v1\nkind: ${r.kind}\nmetadata: {name: ${name}}\n---\napiVersion: v1\nkind: ${r.kind}\n`,
    `apiVersion: ${apiVersionOf(r)}\nkind: ${r.kind}\nmetadata: {name: ${name}, labels: {a: !!binary aGVsbG8=}}\n`,
    `apiVersion: ${apiVersionOf(r)}\nkind: ${r.kind}\nmetadata: {name: ${name}, labels: !!set {a, b}}\n`,
    `apiVersion: ${apiVersionOf(r)}\nkind: ${r.kind}\nmetadata: {name: ${name}, annotations: {? [a, b] : c}}\n`,
    `apiVersion: ${apiVersionOf(r)}\nkind: ${r.kind}\nmetadata: {name: ${name}, annotations: {a: .nan, b: .inf, c: 0x1F, d: ~}}\n`,
    `apiVersion: ${apiVersionOf(r)}\nkind: ${r.kind}\nmetadata: &m {name: ${name}}\nspec: *m\n`,
    `apiVersion: ${apiVersionOf(r)}\nkind: ${r.kind}\nmetadata: {name: ${name}}\nbase: &b {x: 1}\nspec: {<<: *b}\n`,
    `apiVersion: ${apiVersionOf(r)}\nkind: ${r.kind}\nmetadata: {name: ${name}, labels: !custom {a: b}}\n`,
    `apiVersion: ${apiVersionOf(r)}\nkind: ${r.kind}\nmetadata: {name: ${name}, __proto__: {polluted: yes}}\n`,
    'key: "unterminated\n',
    '\t- tab indented',
    '%YAML 9.9\n---\na: 1\n',
    '%TAG ! tag:x,2000:\n---\n!a {b: c}\n',
    `apiVersion: ${apiVersionOf(r)}\nkind: ${r.kind}\nmetadata: {name: ${name}}\n${'x: 1\n'.repeat(2000)}`,
  ];
  let body = rnd.pick(bodies);
  if (rnd.chance(0.15)) body = body.slice(0, rnd.int(body.length));
  const query = rnd.pick([
    '',
    '?fieldManager=fuzz',
    '?fieldManager=fuzz&force=true',
    '?force=maybe',
    `?fieldManager=${'m'.repeat(200)}`,
    '?fieldManager=fuzz&force=true&dryRun=All',
    '?fieldValidation=Strict&fieldManager=fuzz',
  ]);
  const sub = r.subresources.length > 0 && rnd.chance(0.2) ? rnd.pick(r.subresources) : '';
  const path = objectPath(r, { ns: t.namespace, name, sub }) + query;
  return {
    family: 'patch',
    summary: `PATCH ${path} ${ct}: ${JSON.stringify(body.slice(0, 120))}`,
    method: 'PATCH',
    path,
    headers: { 'content-type': ct },
    body,
  };
}

function deleteBodies(c: Ctx): Built {
  const { rnd, r, t, name } = c;
  const body = rnd.pick([
    '{"kind":"DeleteOptions","apiVersion":"v1","gracePeriodSeconds":"x"}',
    '{"gracePeriodSeconds":1e400}',
    '{"gracePeriodSeconds":-99999999999999999999}',
    '{"gracePeriodSeconds":1.5}',
    '{"dryRun":"All"}',
    '{"dryRun":[1]}',
    '{"dryRun":["All","Nope"]}',
    '{"propagationPolicy":{"a":1}}',
    '{"propagationPolicy":"Orphan","orphanDependents":true}',
    '{"orphanDependents":"yes"}',
    '{"preconditions":{"uid":1}}',
    '{"preconditions":{"resourceVersion":"abc"}}',
    '{"preconditions":"x"}',
    '{"kind":"Pod"}',
    '{"kind":"DeleteOptions","apiVersion":"nonsense/v9"}',
    '[]',
    'null',
    '{',
    '',
    'kind: DeleteOptions\ngracePeriodSeconds: [1]\n',
    deepText(10_000, 'object'),
  ]);
  const named = rnd.chance(0.7) || !r.verbs.includes('deletecollection');
  const path =
    (named ? objectPath(r, { ns: t.namespace, name }) : collectionPath(r, t.namespace)) +
    (rnd.chance(0.3) ? '?labelSelector=fuzz%3Dnone' : '');
  const ct = rnd.pick([JSON_TYPE, JSON_TYPE, YAML_TYPE, protobufType(rnd), 'text/plain']);
  return {
    family: 'delete-body',
    summary: `DELETE ${path} ${ct}: ${JSON.stringify(body.slice(0, 100))}`,
    method: 'DELETE',
    path,
    headers: { 'content-type': ct },
    body,
  };
}

const FAMILIES: ReadonlyArray<readonly [(c: Ctx) => Built, number]> = [
  [mutatedBody, 26],
  [contentTypes, 7],
  [aliasBomb, 3],
  [deepNesting, 5],
  [garbageProtobuf, 9],
  [oddMethod, 6],
  [badQuery, 14],
  [oddPaths, 8],
  [hugeHeaders, 3],
  [tooLarge, 2],
  [wrongPatches, 12],
  [deleteBodies, 5],
];

/** Request `index` of the run seeded `seed`. */
export function fuzzRequest(t: FuzzTarget, opts: { seed: number; index: number }): FuzzRequest {
  const rnd = new Prng(opts.seed, opts.index);
  const r = rnd.pick(t.resources);
  const name = rnd.pick(t.names);
  const family = rnd.weighted(FAMILIES);
  const b = family({ rnd, t, r, name });
  const headers: Headers = { ...b.headers };
  if (!headers.authorization) headers.authorization = `Bearer ${t.token}`;
  if (!b.keepAccept) {
    const accept = acceptHeader(rnd);
    if (accept !== undefined) headers.accept = accept;
  }
  const body = b.body === undefined ? undefined : Buffer.isBuffer(b.body) ? b.body : Buffer.from(b.body, 'utf8');
  return {
    index: opts.index,
    family: b.family,
    summary: b.summary,
    method: b.method,
    path: b.path,
    headers,
    body,
    chunked: b.chunked,
  };
}
