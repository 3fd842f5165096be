/**
 * CEL declared types of a schema, as Kubernetes derives them (SchemaDeclType): objects with
 * properties are object types whose fields are the (escaped) property names, additionalProperties
 * is `map<string, V>`, items `list<I>`, int-or-string `dyn`, `byte` strings bytes, timestamps and
 * durations `dyn` here (cel-js does not type them as fields), and nodes without a type are not
 * declared (rules cannot reference them). The resource root and embedded resources also get
 * `apiVersion`, `kind` and `metadata` with `name` and `generateName`. Used to type-check rules
 * (undefined fields, result types); rules are evaluated over plain values (cel-values.ts).
 */
import type { Environment } from '@marcbachmann/cel-js';
import { additionalPropertiesOf, isEmbeddedResource, isIntOrString, itemsOf, type JSONSchemaProps } from './types.js';

/** CEL's reserved words: escaped as property names, refused as variable names. */
export const CEL_RESERVED_WORDS: ReadonlySet<string> = new Set([
  'true',
  'false',
  'null',
  'in',
  'as',
  'break',
  'const',
  'continue',
  'else',
  'for',
  'function',
  'if',
  'import',
  'let',
  'loop',
  'package',
  'namespace',
  'return',
  'var',
  'void',
  'while',
]);

/** Kubernetes' CEL escaping of a property name, or undefined when it cannot be a field. */
export function escapeName(name: string): string | undefined {
  if (name === '' || /^[0-9]/.test(name)) return undefined;
  if (CEL_RESERVED_WORDS.has(name)) return `__${name}__`;
  if (!/^[A-Za-z0-9_./-]+$/.test(name)) return undefined;
  return name.replace(
    /__|[./-]/g,
    (m) => ({ __: '__underscores__', '.': '__dot__', '-': '__dash__', '/': '__slash__' })[m] ?? m,
  );
}

const STRING: JSONSchemaProps = { type: 'string' };
const MINIMAL_META: JSONSchemaProps = { type: 'object', properties: { name: STRING, generateName: STRING } };

/** Kubernetes' WithTypeAndObjectMeta: `kind`, `apiVersion`, `metadata` typed unless the schema already is. */
export function withTypeAndObjectMeta(s: JSONSchemaProps): JSONSchemaProps {
  const p = s.properties ?? {};
  const meta = p.metadata;
  const already =
    p.kind?.type === 'string' &&
    p.apiVersion?.type === 'string' &&
    meta?.type === 'object' &&
    meta.properties?.name?.type === 'string' &&
    meta.properties.generateName?.type === 'string';
  if (already) return s;
  return { ...s, properties: { ...p, kind: STRING, apiVersion: STRING, metadata: MINIMAL_META } };
}

/** The declared types of one schema, registered in an environment. */
export class CelTypes {
  private readonly types = new Map<JSONSchemaProps, string | null>();
  private readonly roots = new Map<JSONSchemaProps, string | null>();
  private readonly envs = new Map<string, Environment>();
  private n = 0;
  readonly env: Environment;

  /**
   * Registers the types of every node of `root` (the root both as a resource and not) in a clone
   * of `base`, named `<prefix>_<n>` (distinct prefixes keep two schemas' types apart in one environment).
   */
  constructor(
    root: JSONSchemaProps,
    base: Environment,
    private readonly prefix = 'Object',
  ) {
    this.env = base.clone();
    this.declare(root, true);
    this.declare(root, false);
    this.declareAll(root);
  }

  /** Nodes below an undeclared node (no type) get types too, so their own rules can compile. */
  private declareAll(s: JSONSchemaProps): void {
    const subs = [itemsOf(s), additionalPropertiesOf(s), ...Object.values(s.properties ?? {})];
    for (const sub of subs) {
      if (!sub) continue;
      this.declare(sub, false);
      this.declareAll(sub);
    }
  }

  /** The CEL type of `s` as registered (undefined when Kubernetes declares none). */
  typeOf(s: JSONSchemaProps, resourceRoot: boolean): string | undefined {
    const t = (resourceRoot || isEmbeddedResource(s) ? this.roots : this.types).get(s);
    return t ?? undefined;
  }

  /** An environment with `self` of type `type` and `oldSelf` (optional when `optionalOldSelf`). */
  envFor(type: string, optionalOldSelf: boolean): Environment {
    const k = `${type}|${optionalOldSelf}`;
    let env = this.envs.get(k);
    if (!env) {
      env = this.env.clone();
      env.registerVariable('self', type);
      env.registerVariable('oldSelf', optionalOldSelf ? `optional<${type}>` : type);
      this.envs.set(k, env);
    }
    return env;
  }

  private declare(s: JSONSchemaProps, resourceRoot: boolean): string | undefined {
    const memo = resourceRoot || isEmbeddedResource(s) ? this.roots : this.types;
    if (memo.has(s)) return memo.get(s) ?? undefined;
    memo.set(s, null);
    const t = this.compute(resourceRoot || isEmbeddedResource(s) ? withTypeAndObjectMeta(s) : s);
    memo.set(s, t ?? null);
    return t;
  }

  private compute(s: JSONSchemaProps): string | undefined {
    if (isIntOrString(s)) return 'dyn';
    switch (s.type) {
      case 'array': {
        const items = itemsOf(s);
        const t = items && this.declare(items, false);
        return t && `list<${t}>`;
      }
      case 'object': {
        const ap = additionalPropertiesOf(s);
        if (ap) {
          const t = this.declare(ap, false);
          return t && `map<string, ${t}>`;
        }
        return this.objectType(s);
      }
      case 'string':
        if (s.format === 'byte') return 'bytes';
        return s.format === 'date' || s.format === 'date-time' || s.format === 'duration' ? 'dyn' : 'string';
      case 'boolean':
        return 'bool';
      case 'number':
        return 'double';
      case 'integer':
        return 'int';
      default:
        return undefined;
    }
  }

  private objectType(s: JSONSchemaProps): string {
    const fields: Record<string, string> = {};
    for (const [k, p] of Object.entries(s.properties ?? {})) {
      const t = this.declare(p, false);
      const name = escapeName(k);
      if (t && name) fields[name] = t;
    }
    const name = `${this.prefix}_${++this.n}`;
    const ctor = class {};
    this.env.registerType(name, { ctor, fields });
    this.env.registerOperator(`${name} == ${name}`, () => false);
    return name;
  }
}
