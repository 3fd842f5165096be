import type { TableColumn } from './catalog.js';
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

/** A column of the default output (priority 0); add a `description` by spreading. */
export function column(name: string, type: TableColumn['type'], cell: TableColumn['cell']): TableColumn {
  return { name, type, priority: 0, description: '', cell };
}

/** A column only the wide output shows (priority 1, `kubectl get -o wide`). */
export function wideColumn(name: string, type: TableColumn['type'], cell: TableColumn['cell']): TableColumn {
  return { name, type, priority: 1, description: '', cell };
}
