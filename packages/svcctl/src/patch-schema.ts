import { NAMINGS } from '@svc/api/names';
import type { Schema } from '@svc/api/schema';

/** A group without the naming's suffix (either naming's): `rbac.authorization`. */
function groupBase(group: string): string {
  for (const n of Object.values(NAMINGS)) {
    const sfx = `.${n.groupSuffix}`;
    if (group.endsWith(sfx)) return group.slice(0, -sfx.length);
  }
  return group;
}

/**
 * The compiled-in schema of a built-in kind (whichever naming the server speaks), whose
 * merge metadata makes strategic merge patches; undefined for kinds svcctl does not know
 * (custom resources), which kubectl patches with JSON merge patches. The catalog is loaded
 * on first use only (it is large).
 */
export async function builtinSchema(o: { group: string; version: string; kind: string }): Promise<Schema | undefined> {
  const { builtinResources } = await import('@svc/api');
  const base = groupBase(o.group);
  const hit = builtinResources().find(
    (r) => groupBase(r.group) === base && r.version === o.version && r.kind === o.kind && !r.custom,
  );
  return hit && hit.strategicMerge ? hit.schema : undefined;
}
