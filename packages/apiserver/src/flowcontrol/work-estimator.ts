import { isGoTrue, parseFieldSelector } from '@svc/machinery';
import type { RequestInfo } from '../endpoints/request-info.js';

/**
 * How many seats a request takes and for how long (Kubernetes' WorkEstimate): `initialSeats`
 * while it runs, then `finalSeats` for `additionalLatencyMs` after it finished (the work of
 * notifying watchers, which the client does not wait for). The request holds the larger of the
 * two the whole time.
 */
export interface WorkEstimate {
  initialSeats: number;
  finalSeats: number;
  additionalLatencyMs: number;
}

/** Kubernetes 1.32's work estimator configuration (`request/config.go`). */
export const WORK_ESTIMATOR = {
  minimumSeats: 1,
  maximumSeatsLimit: 10,
  objectsPerSeat: 100,
  watchesPerSeat: 10,
  eventAdditionalDurationMs: 5,
} as const;

/** The fraction of a level's nominal seats one request may take (`priorityLevelMaxSeatsPercent`). */
const LEVEL_MAX_SEATS_FRACTION = 0.15;

/** The seats a request holds: the larger of its two phases. */
export function maxSeats(we: WorkEstimate): number {
  return Math.max(we.initialSeats, we.finalSeats);
}

/** One seat, no final phase: what most requests cost. */
export const ONE_SEAT: WorkEstimate = { initialSeats: 1, finalSeats: 0, additionalLatencyMs: 0 };

/**
 * The most seats one request of a queuing level may take, as Kubernetes 1.32's configuration
 * controller sets it: max(1, min(ceil(0.15 × nominalCL), floor(nominalCL / handSize))). The
 * estimator caps it further at `maximumSeatsLimit` (10). With the default 600 seats:
 * workload-low (nominal 245, hand 6) min(37, 40), capped to 10; global-default (nominal 49,
 * hand 6) min(8, 8) = 8.
 */
export function levelMaxSeats(nominal: number, handSize: number): number {
  const byShare = Math.ceil(nominal * LEVEL_MAX_SEATS_FRACTION);
  const byHand = handSize > 0 ? Math.trunc(nominal / handSize) : byShare;
  return Math.max(1, Math.min(byShare, byHand));
}

/** An object count of the kind `apiserver_storage_objects` reports, and whether it went stale. */
export interface ObjectCount {
  count: number;
  stale: boolean;
}

export interface WorkEstimatorSources {
  /** The stored objects of a resource (`resource` or `resource.group`); undefined when never counted. */
  objectCount(groupResource: string): ObjectCount | undefined;
  /** Watches that a write to this object would notify. */
  watchCount(info: RequestInfo): number;
  /** The level's largest request (0: no limit known, the estimator's own cap applies). */
  levelMaxSeats(level: string): number;
  /** The WatchList feature: a watch that asks for its initial events costs what the list would. */
  watchList: boolean;
  /** Consistent lists are served from the watch cache (ConsistentListFromCache with the cache on). */
  consistentListFromCache: boolean;
}

/**
 * Kubernetes 1.32's work estimator (`request/width.go`): lists (and, with WatchList, watches
 * that send their initial events) by the objects they go through, creates, updates, patches
 * and deletes by the watchers they notify, everything else one seat.
 */
export function estimateWork(info: RequestInfo, level: string, sources: WorkEstimatorSources): WorkEstimate {
  switch (info.verb) {
    case 'list':
      return listWork(info, level, sources);
    case 'watch':
      return sources.watchList ? listWork(info, level, sources) : ONE_SEAT;
    case 'create':
    case 'update':
    case 'patch':
    case 'delete':
      return mutatingWork(info, level, sources);
    default:
      return ONE_SEAT;
  }
}

function seatCap(level: string, sources: WorkEstimatorSources): number {
  const m = sources.levelMaxSeats(level);
  return m === 0 || m > WORK_ESTIMATOR.maximumSeatsLimit ? WORK_ESTIMATOR.maximumSeatsLimit : m;
}

const seats = (n: number): WorkEstimate => ({ initialSeats: n, finalSeats: 0, additionalLatencyMs: 0 });

/** Go's ParseInt of the `limit` parameter (0 when absent or unparsable: the handler refuses those). */
function limitOf(query: URLSearchParams): number {
  const v = query.get('limit');
  if (v === null || !/^[+-]?\d+$/.test(v)) return 0;
  return Number(v);
}

/**
 * The value an exact-match requirement of a field selector gives `field` (`f=v` or `f==v`), as
 * Kubernetes' `RequiresExactMatch`; undefined when there is none or the selector does not parse
 * (the handler refuses it).
 */
export function exactFieldMatch(selector: string | null, field: string): string | undefined {
  if (!selector) return undefined;
  try {
    return parseFieldSelector(selector).requiresExactMatch(field);
  } catch {
    return undefined;
  }
}

/** The object a request names: the path's name or, for lists and watches, `metadata.name=` of the field selector. */
export function requestedName(info: RequestInfo): string {
  if (info.name) return info.name;
  if (info.verb !== 'list' && info.verb !== 'watch') return '';
  return exactFieldMatch(info.query.get('fieldSelector'), 'metadata.name') ?? '';
}

/**
 * Whether the list is read from the store rather than the watch cache (Kubernetes'
 * `shouldListFromStorage`): a consistent read without ConsistentListFromCache, a continuation,
 * or a resourceVersionMatch the cache cannot serve.
 */
function listsFromStorage(query: URLSearchParams, consistentListFromCache: boolean): boolean {
  const rv = query.get('resourceVersion') ?? '';
  const match = query.get('resourceVersionMatch') ?? '';
  const consistentFromStorage = rv === '' && !consistentListFromCache;
  const continuation = (query.get('continue') ?? '') !== '';
  const legacyExact = limitOf(query) > 0 && match === '' && rv !== '' && rv !== '0';
  const unsupported = (match !== '' && match !== 'NotOlderThan') || legacyExact;
  return consistentFromStorage || continuation || unsupported;
}

function groupResource(info: RequestInfo): string {
  return info.apiGroup ? `${info.resource}.${info.apiGroup}` : info.resource;
}

/** Kubernetes' list work estimator: a seat per 100 objects the list goes through, 1 to the cap. */
function listWork(info: RequestInfo, level: string, sources: WorkEstimatorSources): WorkEstimate {
  const min = WORK_ESTIMATOR.minimumSeats;
  const max = seatCap(level, sources);
  // A list of one named object is a get in the store.
  if (requestedName(info) !== '') return seats(min);
  const q = info.query;
  if (info.verb === 'watch' && !isGoTrue(q.get('sendInitialEvents'))) return seats(min);
  const fromCache = info.verb === 'watch' || !listsFromStorage(q, sources.consistentListFromCache);
  const counted = sources.objectCount(groupResource(info));
  // Not counted: unknown, or served elsewhere (aggregated): the least. Stale: the most.
  if (!counted) return seats(min);
  if (counted.stale) return seats(max);
  const stored = counted.count;
  const limit = limitOf(q);
  const returned = limit > 0 && limit < stored ? limit : stored;
  const hasSelector = (q.get('fieldSelector') ?? '') !== '' || (q.get('labelSelector') ?? '') !== '';
  const processed = fromCache ? stored : hasSelector ? stored + returned : 2 * returned;
  return seats(Math.min(max, Math.max(min, Math.ceil(processed / WORK_ESTIMATOR.objectsPerSeat))));
}

/**
 * Kubernetes' mutating work estimator: one seat while the write runs; with 10 or more
 * interested watches, ceil(watches / 10) seats (at most the cap) for the 5 ms per seat of
 * notifying them, reshaped to the capped seats with the same seat-seconds.
 */
function mutatingWork(info: RequestInfo, level: string, sources: WorkEstimatorSources): WorkEstimate {
  // A service account token request writes nothing anyone watches.
  if (info.resource === 'serviceaccounts' && info.subresource === 'token') return ONE_SEAT;
  const watches = sources.watchCount(info);
  if (watches < WORK_ESTIMATOR.watchesPerSeat) return ONE_SEAT;
  const wanted = Math.ceil(watches / WORK_ESTIMATOR.watchesPerSeat);
  const finalWorkMs = wanted * WORK_ESTIMATOR.eventAdditionalDurationMs;
  const finalSeats = Math.min(wanted, seatCap(level, sources));
  return { initialSeats: 1, finalSeats, additionalLatencyMs: finalWorkMs / finalSeats };
}
