import { parseRequestInfo } from '../endpoints/request-info.js';
import { mandatoryPriorityLevels, suggestedPriorityLevels } from './bootstrap.js';
import { levelLimits } from './dispatcher.js';
import { ObjectCounts } from './object-counts.js';
import { WatchTracker } from './watch-tracker.js';
import { estimateWork, levelMaxSeats, type WorkEstimatorSources } from './work-estimator.js';

function info(method: string, url: string): ReturnType<typeof parseRequestInfo> {
  const u = new URL(url, 'https://server');
  return parseRequestInfo(method, u.pathname, u.searchParams);
}

function sources(o: Partial<WorkEstimatorSources> & { counts?: Record<string, number> } = {}): WorkEstimatorSources {
  const counts = new ObjectCounts();
  for (const [k, v] of Object.entries(o.counts ?? {})) counts.set(k, v);
  return {
    objectCount: (gr) => counts.get(gr),
    watchCount: () => 0,
    levelMaxSeats: () => 0,
    watchList: false,
    consistentListFromCache: true,
    ...o,
  };
}

const seats = (n: number): object => ({ initialSeats: n, finalSeats: 0, additionalLatencyMs: 0 });

describe("the work estimator (Kubernetes 1.32's)", () => {
  it('gives a level the max seats max(1, min(ceil(15% of nominal), nominal / handSize))', () => {
    expect(levelMaxSeats(49, 6)).toBe(8);
    expect(levelMaxSeats(245, 6)).toBe(37); // the estimator caps it at 10
    expect(levelMaxSeats(1, 1)).toBe(1);
    expect(levelMaxSeats(3, 8)).toBe(1);
    // The default configuration with the default 600 seats.
    const limits = levelLimits([...mandatoryPriorityLevels(), ...suggestedPriorityLevels()], 600);
    expect(limits.get('global-default')).toMatchObject({ nominal: 49, maxSeats: 8 });
    expect(limits.get('workload-low')).toMatchObject({ nominal: 245, maxSeats: 37 });
    expect(limits.get('catch-all')?.maxSeats).toBe(0); // Reject: no queuing, the cap of 10 applies
  });

  it('costs a list a seat per 100 objects it goes through, from 1 up to the cap', () => {
    const s = sources({ counts: { configmaps: 750, 'deployments.apps': 5000, pods: 40 } });
    // From the cache (a consistent list with ConsistentListFromCache): every stored object.
    expect(estimateWork(info('GET', '/api/v1/configmaps'), 'l', s)).toEqual(seats(8));
    expect(estimateWork(info('GET', '/api/v1/namespaces/a/configmaps'), 'l', s)).toEqual(seats(8));
    expect(estimateWork(info('GET', '/api/v1/pods'), 'l', s)).toEqual(seats(1));
    expect(estimateWork(info('GET', '/apis/apps/v1/deployments'), 'l', s)).toEqual(seats(10));
    // The level's max seats, when lower, caps it.
    expect(estimateWork(info('GET', '/api/v1/configmaps'), 'l', { ...s, levelMaxSeats: () => 3 })).toEqual(seats(3));
    // From the store (a continuation): twice the page, or every object plus the page with a selector.
    expect(estimateWork(info('GET', '/api/v1/configmaps?limit=100&continue=x'), 'l', s)).toEqual(seats(2));
    expect(estimateWork(info('GET', '/api/v1/configmaps?limit=100&continue=x&labelSelector=a%3Db'), 'l', s)).toEqual(
      seats(9),
    );
    // Without ConsistentListFromCache a consistent list reads the store.
    const fromStore = { ...s, consistentListFromCache: false };
    expect(estimateWork(info('GET', '/api/v1/configmaps?limit=50'), 'l', fromStore)).toEqual(seats(1));
    expect(estimateWork(info('GET', '/api/v1/configmaps?resourceVersion=0'), 'l', fromStore)).toEqual(seats(8));
    expect(
      estimateWork(info('GET', '/api/v1/configmaps?resourceVersion=5&resourceVersionMatch=Exact'), 'l', s),
    ).toEqual(seats(10));
  });

  it('costs one seat for a list of one named object or of a type never counted; the cap for a stale count', () => {
    const s = sources({ counts: { configmaps: 5000 } });
    expect(estimateWork(info('GET', '/api/v1/configmaps?fieldSelector=metadata.name%3Dx'), 'l', s)).toEqual(seats(1));
    expect(estimateWork(info('GET', '/apis/example.com/v1/widgets'), 'l', s)).toEqual(seats(1));
    let now = 0;
    const counts = new ObjectCounts(() => now);
    counts.set('configmaps', 5);
    const stale = sources({ objectCount: (gr) => counts.get(gr) });
    expect(estimateWork(info('GET', '/api/v1/configmaps'), 'global-default', stale)).toEqual(seats(1));
    now = 3 * 60_000 + 1;
    expect(estimateWork(info('GET', '/api/v1/configmaps'), 'global-default', stale)).toEqual(seats(10));
    counts.set('configmaps', -1); // a failed poll keeps the stale count
    expect(estimateWork(info('GET', '/api/v1/configmaps'), 'global-default', stale)).toEqual(seats(10));
  });

  it('costs a watch one seat, or with WatchList and sendInitialEvents what its list would', () => {
    const s = sources({ counts: { configmaps: 950 } });
    expect(estimateWork(info('GET', '/api/v1/configmaps?watch=true&sendInitialEvents=true'), 'l', s)).toEqual(seats(1));
    const wl = { ...s, watchList: true };
    expect(estimateWork(info('GET', '/api/v1/configmaps?watch=true'), 'l', wl)).toEqual(seats(1));
    expect(estimateWork(info('GET', '/api/v1/configmaps?watch=1&sendInitialEvents=true'), 'l', wl)).toEqual(seats(10));
  });

  it('gives a write with 10 or more interested watches final seats for 5 ms of notifications per seat', () => {
    const tracker = new WatchTracker();
    const s = sources({ watchCount: (i) => tracker.interested(i), levelMaxSeats: () => 8 });
    const create = info('POST', '/api/v1/namespaces/a/configmaps');
    expect(estimateWork(create, 'l', s)).toEqual(seats(1));
    const forget: Array<() => void> = [];
    for (let i = 0; i < 9; i++) forget.push(tracker.register(info('GET', '/api/v1/configmaps?watch=true')));
    expect(estimateWork(create, 'l', s)).toEqual(seats(1));
    forget.push(tracker.register(info('GET', '/api/v1/namespaces/a/configmaps?watch=true')));
    // Ten watches: one final seat for 10 × 5 ms / 10 = 5 ms.
    expect(estimateWork(create, 'l', s)).toEqual({ initialSeats: 1, finalSeats: 1, additionalLatencyMs: 5 });
    for (let i = 0; i < 90; i++) forget.push(tracker.register(info('GET', '/api/v1/configmaps?watch=true')));
    // 100 watches want 10 seats; the level's 8 take the same 50 seat-ms: 6.25 ms each.
    expect(estimateWork(create, 'l', s)).toEqual({ initialSeats: 1, finalSeats: 8, additionalLatencyMs: 6.25 });
    // Watches of another namespace, another resource or a node's pods do not count.
    for (const f of forget.splice(0)) f();
    for (let i = 0; i < 20; i++) {
      tracker.register(info('GET', '/api/v1/namespaces/b/configmaps?watch=true'));
      tracker.register(info('GET', '/api/v1/secrets?watch=true'));
      tracker.register(info('GET', '/api/v1/pods?watch=true&fieldSelector=spec.nodeName%3Dn1'));
    }
    expect(estimateWork(create, 'l', s)).toEqual(seats(1));
    expect(estimateWork(info('POST', '/api/v1/namespaces/a/pods'), 'l', s)).toEqual(seats(1));
    // Watches of one object count for writes of that object.
    for (let i = 0; i < 10; i++)
      tracker.register(info('GET', '/api/v1/namespaces/a/configmaps?watch=true&fieldSelector=metadata.name%3Dc'));
    expect(estimateWork(info('PUT', '/api/v1/namespaces/a/configmaps/c'), 'l', s).finalSeats).toBe(1);
    expect(estimateWork(info('PUT', '/api/v1/namespaces/a/configmaps/d'), 'l', s).finalSeats).toBe(0);
    // A token request writes nothing watched; reads and deletecollection cost one seat.
    for (let i = 0; i < 10; i++) tracker.register(info('GET', '/api/v1/serviceaccounts?watch=true'));
    expect(estimateWork(info('POST', '/api/v1/namespaces/a/serviceaccounts/x/token'), 'l', s)).toEqual(seats(1));
    expect(estimateWork(info('DELETE', '/api/v1/namespaces/a/configmaps'), 'l', s)).toEqual(seats(1));
    expect(estimateWork(info('GET', '/api/v1/namespaces/a/configmaps/c'), 'l', s)).toEqual(seats(1));
  });
});
