import {
  badRequest,
  defaultColumns,
  type ApiObject,
  type ObjectList,
  type ResourceType,
  type TableColumn,
} from '@svc/api';

export type IncludeObject = 'None' | 'Metadata' | 'Object';

export function includeObjectOf(query: URLSearchParams): IncludeObject {
  const v = query.get('includeObject') ?? '';
  if (v === '') return 'Metadata';
  if (v === 'None' || v === 'Metadata' || v === 'Object') return v;
  throw badRequest(
    `includeObject: Unsupported value: ${JSON.stringify(v)}: supported values: "None", "Metadata", "Object"`,
  );
}

function columnsOf(r: ResourceType): readonly TableColumn[] {
  return r.tableColumns ?? defaultColumns;
}

/**
 * The Table form (`meta.<group>/v1`) of objects: the type's printer columns (or Name and
 * Created At), one row per object with its cells and the object as PartialObjectMetadata,
 * whole, or not at all. `headers: false` omits the column definitions (watch events after the first).
 */
export function toTable(
  r: ResourceType,
  objects: ApiObject[],
  opts: { group: string; include: IncludeObject; listMeta?: ObjectList['metadata']; headers?: boolean },
): object {
  const columns = columnsOf(r);
  const now = Date.now();
  const apiVersion = `${opts.group}/v1`;
  return {
    kind: 'Table',
    apiVersion,
    metadata: opts.listMeta ?? {},
    columnDefinitions:
      opts.headers === false
        ? []
        : columns.map((c) => ({
            name: c.name,
            type: c.type,
            format: c.format ?? '',
            description: c.description ?? '',
            priority: c.priority ?? 0,
          })),
    rows: objects.map((o) => {
      const row: Record<string, unknown> = { cells: columns.map((c) => c.cell(o, now)) };
      if (opts.include === 'Object') row.object = o;
      else if (opts.include === 'Metadata')
        row.object = { kind: 'PartialObjectMetadata', apiVersion, metadata: o.metadata };
      return row;
    }),
  };
}
