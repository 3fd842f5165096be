import { defineResource, type ResourceType } from '../../../catalog.js';
import { objectSchema } from '../../../meta-schema.js';
import { group } from '../../../names.js';
import { s } from '../../../schema.js';
import type { ApiObject } from '../../../types.js';
import { objectReference } from '../../core/v1/common.js';
import { event as coreEvent, eventSeries, eventSource, referenceSelectors } from '../../core/v1/event.js';

/** events/v1 field ← core/v1 field; every other field has the same name in both. */
const RENAMED: ReadonlyArray<readonly [string, string]> = [
  ['regarding', 'involvedObject'],
  ['note', 'message'],
  ['reportingController', 'reportingComponent'],
  ['deprecatedSource', 'source'],
  ['deprecatedFirstTimestamp', 'firstTimestamp'],
  ['deprecatedLastTimestamp', 'lastTimestamp'],
  ['deprecatedCount', 'count'],
];

function rename(obj: ApiObject, apiVersion: string, pairs: ReadonlyArray<readonly [string, string]>): ApiObject {
  const out: ApiObject = { ...obj, apiVersion, kind: 'Event' };
  for (const [from, to] of pairs) {
    delete out[from];
    if (obj[from] !== undefined) out[to] = obj[from];
  }
  return out;
}

const TO_STORED = RENAMED;
const FROM_STORED = RENAMED.map(([events, core]) => [core, events] as const);

/** An events/v1 Event as the core/v1 Event it is stored as. */
export function eventToCore(obj: ApiObject): ApiObject {
  return rename(obj, 'v1', TO_STORED);
}

/** A stored core/v1 Event as an events/v1 Event. */
export function eventFromCore(obj: ApiObject): ApiObject {
  return rename(obj, `${group('events')}/v1`, FROM_STORED);
}

/**
 * events.<suffix>/v1 Event (the spec's Events section): the newer shape of core Events,
 * stored as them. `regarding`, `note`, `reportingController` and the `deprecated*` fields are
 * core's `involvedObject`, `message`, `reportingComponent`, `source`, `firstTimestamp`,
 * `lastTimestamp` and `count`.
 */
export const eventsEvent = (): ResourceType => {
  const core = coreEvent();
  return defineResource({
    group: group('events'),
    version: 'v1',
    kind: 'Event',
    plural: 'events',
    singular: 'event',
    shortNames: ['ev'],
    namespaced: true,
    hasSpec: false,
    // The same printer as core Events (Kubernetes prints both from one internal type).
    tableColumns: core.tableColumns?.map((c) => ({
      ...c,
      cell: (o: ApiObject, now: number) => c.cell(eventToCore(o), now),
    })),
    schema: objectSchema({
      eventTime: s.microTime({ tag: 2 }),
      series: eventSeries(3),
      reportingController: s.str({ tag: 4 }),
      reportingInstance: s.str({ tag: 5 }),
      action: s.str({ tag: 6 }),
      reason: s.str({ tag: 7 }),
      regarding: { ...objectReference, tag: 8 },
      related: { ...objectReference, tag: 9 },
      note: s.str({ tag: 10 }),
      type: s.str({ tag: 11 }),
      deprecatedSource: eventSource(12),
      deprecatedFirstTimestamp: s.time({ tag: 13 }),
      deprecatedLastTimestamp: s.time({ tag: 14 }),
      deprecatedCount: s.int32({ tag: 15 }),
    }),
    // Kubernetes' field label conversions for events/v1.
    fieldSelectors: {
      ...referenceSelectors('regarding'),
      reason: (o) => String(o.reason ?? ''),
      reportingController: (o) => String(o.reportingController ?? ''),
      type: (o) => String(o.type ?? ''),
    },
    storedAs: { group: core.group, plural: core.plural, toStored: eventToCore, fromStored: eventFromCore },
  });
};
