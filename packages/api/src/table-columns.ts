import type { TableColumn } from './catalog.js';
import type { ApiObject } from './types.js';
import { AGE_DESCRIPTION, NAME_DESCRIPTION, age } from './table-format.js';

/** `Name`, the first column of every table. */
export const nameColumn: TableColumn = {
  name: 'Name',
  type: 'string',
  format: 'name',
  description: NAME_DESCRIPTION,
  priority: 0,
  cell: (o) => o.metadata.name ?? '',
};

/** `Age`, from creationTimestamp. */
export const ageColumn: TableColumn = {
  name: 'Age',
  type: 'string',
  description: AGE_DESCRIPTION,
  priority: 0,
  cell: (o, now) => age(o.metadata.creationTimestamp, now),
};

/** The default pair for types without printer columns (spec: Shapes, Table). */
export const defaultColumns: readonly TableColumn[] = [
  nameColumn,
  {
    name: 'Created At',
    type: 'date',
    description: AGE_DESCRIPTION,
    priority: 0,
    cell: (o) => o.metadata.creationTimestamp ?? null,
  },
];

export function column(
  name: string,
  type: TableColumn['type'],
  cell: (o: ApiObject, now: number) => unknown,
  priority = 0,
  description = '',
): TableColumn {
  return { name, type, priority, description, cell };
}
