import type { ApiObject } from '../../../types.js';
import { naming } from '../../../names.js';
import { NONE } from '../../../table-format.js';

export function nodeStatus(o: ApiObject): string {
  const conditions =
    (o.status as { conditions?: Array<{ type?: string; status?: string }> } | undefined)?.conditions ?? [];
  const ready = conditions.find((c) => c.type === 'Ready');
  const parts = [ready?.status === 'True' ? 'Ready' : ready?.status === 'False' ? 'NotReady' : 'Unknown'];
  if ((o.spec as { unschedulable?: boolean } | undefined)?.unschedulable) parts.push('SchedulingDisabled');
  return parts.join(',');
}

/** Roles from `node-role.<prefix>/<role>` labels (and the older `<prefix>/role`). */
export function nodeRoles(o: ApiObject): string {
  const rolePrefix = `node-role.${naming().labelPrefix}/`;
  const roles = new Set<string>();
  for (const [k, v] of Object.entries(o.metadata.labels ?? {})) {
    if (k.startsWith(rolePrefix) && k.length > rolePrefix.length) roles.add(k.slice(rolePrefix.length));
    else if (k === `${naming().labelPrefix}/role` && v) roles.add(v);
  }
  return roles.size ? [...roles].sort().join(',') : NONE;
}

export function nodeAddress(o: ApiObject, type: string): string {
  const addrs = (o.status as { addresses?: Array<{ type?: string; address?: string }> } | undefined)?.addresses ?? [];
  return addrs.find((a) => a.type === type)?.address ?? NONE;
}
