/**
 * The 409 `Conflict` a server-side apply answers when it would change fields other managers
 * own, worded exactly as Kubernetes words it:
 * `Apply failed with 1 conflict: conflict with "m" using v1: .data.key`, and for several,
 * `Apply failed with 2 conflicts: conflicts with "m" using v1:\n- .a\n- .b` (managers sorted,
 * paths in field-set order), with one `FieldManagerConflict` cause per field.
 */
import { statusError, type StatusCause, type StatusError } from '@svc/api';
import { pathString, type FieldPath } from './field-path.js';
import { compareStrings } from './json-compare.js';
import type { ManagedOperation } from './managed-fields.js';

export interface ApplyConflict {
  manager: string;
  operation: ManagedOperation;
  apiVersion: string;
  subresource?: string;
  path: FieldPath;
}

/** How Kubernetes names a manager in conflicts: `"m"`, `"m" with subresource "status"`, `... using v1`. */
export function conflictManagerName(c: Omit<ApplyConflict, 'path'>): string {
  let s = JSON.stringify(c.manager);
  if (c.subresource) s += ` with subresource ${JSON.stringify(c.subresource)}`;
  if (c.operation === 'Update') s += ` using ${c.apiVersion}`;
  return s;
}

/** The conflict error; `conflicts` must not be empty and is reported in the given order. */
export function applyConflictError(conflicts: readonly ApplyConflict[]): StatusError {
  const causes: StatusCause[] = conflicts.map((c) => ({
    reason: 'FieldManagerConflict',
    message: `conflict with ${conflictManagerName(c)}`,
    field: pathString(c.path),
  }));
  return statusError('Conflict', conflictMessage(conflicts), { causes });
}

function conflictMessage(conflicts: readonly ApplyConflict[]): string {
  const only = conflicts[0];
  if (conflicts.length === 1 && only) {
    return `Apply failed with 1 conflict: conflict with ${conflictManagerName(only)}: ${pathString(only.path)}`;
  }
  const byManager = new Map<string, string[]>();
  for (const c of conflicts) {
    const name = conflictManagerName(c);
    const list = byManager.get(name) ?? [];
    list.push(pathString(c.path));
    byManager.set(name, list);
  }
  const lines: string[] = [];
  for (const name of [...byManager.keys()].sort(compareStrings)) {
    lines.push(`conflicts with ${name}:`);
    for (const p of byManager.get(name) ?? []) lines.push(`- ${p}`);
  }
  return `Apply failed with ${conflicts.length} conflicts: ${lines.join('\n')}`;
}
