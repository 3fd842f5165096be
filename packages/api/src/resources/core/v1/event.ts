import { defineResource, type ResourceType } from '../../../catalog.js';
import { objectSchema } from '../../../meta-schema.js';
import { s } from '../../../schema.js';
import { column, nameColumn, wideColumn } from '../../../table-columns.js';
import { age } from '../../../table-format.js';
import { eventLastSeen, eventObject, eventSourceText } from './event-printer.js';
import type { ApiObject } from '../../../types.js';
import type { ObjectReference } from '../../../wire/meta.js';
import { objectReference } from './common.js';

/** Field selectors on an Event's object reference `field` (`involvedObject`, `regarding`). */
export function referenceSelectors(field: string): Record<string, (o: ApiObject) => string> {
  const ref = (o: ApiObject): ObjectReference => (o[field] ?? {}) as ObjectReference;
  const keys = ['kind', 'namespace', 'name', 'uid', 'apiVersion', 'resourceVersion', 'fieldPath'] as const;
  return Object.fromEntries(keys.map((k) => [`${field}.${k}`, (o: ApiObject) => ref(o)[k] ?? '']));
}

/** EventSeries (MicroTime lastObservedTime) at `tag`. */
export const eventSeries = (tag: number) =>
  s.obj({ count: s.int32({ tag: 1 }), lastObservedTime: s.microTime({ tag: 2 }) }, { tag });
/** EventSource at `tag`. */
export const eventSource = (tag: number) => s.obj({ component: s.str({ tag: 1 }), host: s.str({ tag: 2 }) }, { tag });

export const eventSchema = objectSchema(
  {
    involvedObject: { ...objectReference, tag: 2 },
    reason: s.str({ tag: 3 }),
    message: s.str({ tag: 4 }),
    source: eventSource(5),
    firstTimestamp: s.time({ tag: 6 }),
    lastTimestamp: s.time({ tag: 7 }),
    count: s.int32({ tag: 8 }),
    type: s.str({ tag: 9 }),
    eventTime: s.microTime({ tag: 10 }),
    series: eventSeries(11),
    action: s.str({ tag: 12 }),
    related: { ...objectReference, tag: 13 },
    reportingComponent: s.str({ tag: 14 }),
    reportingInstance: s.str({ tag: 15 }),
  },
  { required: ['involvedObject'] },
);

export const event = (): ResourceType =>
  defineResource({
    group: '',
    version: 'v1',
    kind: 'Event',
    plural: 'events',
    singular: 'event',
    shortNames: ['ev'],
    namespaced: true,
    hasSpec: false,
    tableColumns: [
      column('Last Seen', 'string', eventLastSeen),
      column('Type', 'string', (o) => String(o.type ?? '')),
      column('Reason', 'string', (o) => String(o.reason ?? '')),
      column('Object', 'string', eventObject),
      wideColumn('Subobject', 'string', (o) =>
        String((o.involvedObject as { fieldPath?: string } | undefined)?.fieldPath ?? ''),
      ),
      wideColumn('Source', 'string', eventSourceText),
      column('Message', 'string', (o) => String(o.message ?? '')),
      wideColumn('First Seen', 'string', (o, now) =>
        age(String(o.firstTimestamp ?? o.eventTime ?? '') || undefined, now),
      ),
      wideColumn('Count', 'integer', (o) => Number(o.count ?? 1)),
      { ...nameColumn, priority: 1 },
    ],
    schema: eventSchema,
    fieldSelectors: {
      ...referenceSelectors('involvedObject'),
      reason: (o) => String(o.reason ?? ''),
      reportingComponent: (o) => String(o.reportingComponent ?? ''),
      source: (o) => String((o.source as { component?: string } | undefined)?.component ?? ''),
      type: (o) => String(o.type ?? ''),
    },
  });
