import { NAMINGS, group, naming } from '@svc/api';
import type { CrdManifest } from './crds.js';

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Keys whose value is a map of name → schema (the names are data, not extensions). */
const SCHEMA_MAPS = ['properties', 'patternProperties', 'definitions', 'dependencies'];
/** Keys whose value is a schema (or, for some, a boolean or an array of schemas). */
const SCHEMAS = ['items', 'additionalProperties', 'additionalItems', 'not', 'allOf', 'anyOf', 'oneOf'];

/** `schema` with vendor extensions spelled with `to` instead of `from` (`x-kubernetes-` → `x-svc-`), recursively. */
function respell(schema: unknown, p: { from: string; to: string }): unknown {
  if (Array.isArray(schema)) return schema.map((s) => respell(s, p));
  if (!isObject(schema)) return schema;
  const out: Json = {};
  for (const [k, v] of Object.entries(schema)) {
    const key = k.startsWith(p.from) ? p.to + k.slice(p.from.length) : k;
    if (SCHEMA_MAPS.includes(k) && isObject(v)) {
      out[key] = Object.fromEntries(Object.entries(v).map(([name, s]) => [name, respell(s, p)]));
    } else if (SCHEMAS.includes(k)) {
      out[key] = respell(v, p);
    } else {
      out[key] = v;
    }
  }
  return out;
}

/**
 * `crd` spelled for the server's naming: its apiVersion (apiextensions under either naming's
 * group suffix) and its schemas' vendor extensions (`x-kubernetes-*` or
 * `x-svc-*`), so a manifest written for Kubernetes installs on a server with the default
 * naming, and the reverse. Other manifests are returned as they are.
 */
export function inServerNaming(crd: CrdManifest): CrdManifest {
  const [g, v] = (crd.apiVersion ?? '').split('/');
  if (!g?.startsWith('apiextensions.') || !v) return crd;
  const to = naming().schemaExtensionPrefix;
  const from = Object.values(NAMINGS)
    .map((n) => n.schemaExtensionPrefix)
    .find((prefix) => prefix !== to);
  const apiVersion = `${group('apiextensions')}/${v}`;
  // A manifest without versions is left for the server to refuse.
  const spec = crd.spec as Partial<CrdManifest['spec']> | undefined;
  if (!from || !Array.isArray(spec?.versions)) return { ...crd, apiVersion };
  const versions = (spec.versions as Json[]).map((version) => {
    const schema = version.schema;
    if (!isObject(schema) || !isObject(schema.openAPIV3Schema)) return version;
    return { ...version, schema: { ...schema, openAPIV3Schema: respell(schema.openAPIV3Schema, { from, to }) } };
  });
  return { ...crd, apiVersion, spec: { ...crd.spec, versions } } as CrdManifest;
}
