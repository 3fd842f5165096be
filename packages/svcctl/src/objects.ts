/** A JSON object as the server sends it (any kind). */
export interface ApiObjectJson {
  apiVersion?: string;
  kind?: string;
  metadata?: {
    name?: string;
    namespace?: string;
    creationTimestamp?: string;
    resourceVersion?: string;
    continue?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    managedFields?: unknown[];
    [k: string]: unknown;
  };
  [k: string]: unknown;
}

/** The items of a list with their `apiVersion` and `kind` set (a list's items carry neither). */
export function objectsOfList(list: ApiObjectJson): ApiObjectJson[] {
  if (!Array.isArray(list.items)) return [list];
  const kind = typeof list.kind === 'string' && list.kind.endsWith('List') ? list.kind.slice(0, -4) : undefined;
  return (list.items as ApiObjectJson[]).map((item) => ({
    ...(list.apiVersion && !item.apiVersion ? { apiVersion: list.apiVersion } : {}),
    ...(kind && !item.kind ? { kind } : {}),
    ...item,
  }));
}

/** As kubectl prints objects: without `metadata.managedFields` (kubectl's --show-managed-fields=false). */
export function stripForOutput<T extends ApiObjectJson>(obj: T): T {
  if (!obj.metadata || !('managedFields' in obj.metadata)) return obj;
  const { managedFields: _drop, ...metadata } = obj.metadata;
  return { ...obj, metadata };
}
