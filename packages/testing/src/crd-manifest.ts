import { NAMINGS, naming, type NamingScheme } from '@svc/api';
import type { CrdManifest } from './crds.js';

type Json = Record<string, unknown>;

/** One version of a CRD for `crdManifest`; fields other than these (subresources, printer columns, ...) are copied. */
export interface CrdVersionInput {
  name: string;
  /** The version's `schema.openAPIV3Schema`. */
  schema?: Json;
  /** Default true. */
  served?: boolean;
  /** Default: true when it is the CRD's only version. */
  storage?: boolean;
  [field: string]: unknown;
}

export interface CrdManifestInput {
  group: string;
  plural: string;
  kind: string;
  /** Default `Namespaced`. */
  scope?: 'Namespaced' | 'Cluster';
  /** The rest of `spec.names` (`singular` defaults to the kind in lower case). */
  names?: { singular?: string; shortNames?: string[]; categories?: string[]; listKind?: string };
  versions: CrdVersionInput[];
  /** The rest of `spec` (`conversion`, ...). */
  spec?: Json;
  /** Whose spelling of `apiextensions.<suffix>/v1`; default: the naming in use in this process. */
  naming?: NamingScheme;
}

/** A CustomResourceDefinition `<plural>.<group>` as a test writes one. */
export function crdManifest(o: CrdManifestInput): CrdManifest {
  const suffix = (o.naming ? NAMINGS[o.naming] : naming()).groupSuffix;
  return {
    apiVersion: `apiextensions.${suffix}/v1`,
    kind: 'CustomResourceDefinition',
    metadata: { name: `${o.plural}.${o.group}` },
    spec: {
      group: o.group,
      scope: o.scope ?? 'Namespaced',
      names: { plural: o.plural, singular: o.kind.toLowerCase(), kind: o.kind, ...o.names },
      versions: o.versions.map(({ name, schema, served, storage, ...rest }) => ({
        name,
        served: served ?? true,
        storage: storage ?? o.versions.length === 1,
        ...(schema ? { schema: { openAPIV3Schema: schema } } : {}),
        ...rest,
      })),
      ...o.spec,
    },
  };
}
