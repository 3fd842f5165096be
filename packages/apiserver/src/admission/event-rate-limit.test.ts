// EventRateLimit: its configuration (Kubernetes' validation) and the token buckets per limit type.
import type { ApiObject } from '@svc/api';
import { ConfigurationError } from '../options.js';
import { EventRateLimit, parseEventRateLimitConfig, type EventLimit } from './event-rate-limit.js';
import { attributes, failure } from './admission-testing.js';

const config = (limits: unknown): unknown => ({
  apiVersion: 'eventratelimit.admission.svc.io/v1alpha1',
  kind: 'Configuration',
  limits,
});

describe('the configuration', () => {
  it('reads limits (Kubernetes spelling too) and keeps cacheSize 0 for the default', () => {
    expect(parseEventRateLimitConfig(config([{ type: 'Namespace', qps: 5, burst: 10 }]))).toEqual([
      { type: 'Namespace', qps: 5, burst: 10, cacheSize: 0 },
    ]);
    const k8s = {
      ...(config([{ type: 'Server', qps: 1, burst: 1 }]) as object),
      apiVersion: 'eventratelimit.admission.k8s.io/v1alpha1',
    };
    expect(parseEventRateLimitConfig(k8s)).toHaveLength(1);
  });

  it.each<[unknown, string]>([
    [undefined, 'limits: Invalid value: null: must not be empty'],
    [config([]), 'limits: Invalid value: []: must not be empty'],
    [
      { kind: 'Configuration', limits: [] },
      'expected kind Configuration in eventratelimit.admission.svc.io/v1alpha1 or eventratelimit.admission.k8s.io/v1alpha1, got Configuration in undefined',
    ],
    [
      config([{ type: 'Pod', qps: 0, burst: -1, cacheSize: -2 }]),
      '[limits[0].type: Unsupported value: "Pod": supported values: "Server", "Namespace", "User", "SourceAndObject", limits[0].burst: Invalid value: -1: must be positive, limits[0].qps: Invalid value: 0: must be positive, limits[0].cacheSize: Invalid value: -2: must not be negative]',
    ],
    [config([{ type: 'Server', qps: 1.5, burst: 2 }]), 'limits[0].qps: Invalid value: 1.5: must be an integer'],
  ])('refuses %j', (raw, why) => {
    expect(() => parseEventRateLimitConfig(raw)).toThrow(ConfigurationError);
    expect(() => parseEventRateLimitConfig(raw)).toThrow(`--admission-control-config-file: EventRateLimit: ${why}`);
  });
});

const event = (o: { ns?: string; name?: string; component?: string } = {}): ApiObject => ({
  apiVersion: 'v1',
  kind: 'Event',
  metadata: { name: 'e', namespace: o.ns ?? 'a' },
  involvedObject: { kind: 'Pod', namespace: o.ns ?? 'a', name: o.name ?? 'p', uid: 'u', apiVersion: 'v1' },
  source: { component: o.component ?? 'svclet', host: 'h' },
});

function plugin(limits: EventLimit[]): { p: EventRateLimit; tick: (ms: number) => void } {
  let now = 0;
  return { p: new EventRateLimit({ limits, now: () => now }), tick: (ms) => (now += ms) };
}

const post = (
  p: EventRateLimit,
  o: Parameters<typeof event>[0] & { user?: string; dryRun?: boolean } = {},
): Promise<void> =>
  p.validate(
    attributes({
      resource: 'events',
      object: event(o),
      user: o.user ? { name: o.user, groups: [] } : undefined,
      dryRun: o.dryRun,
    }),
  );

describe('the limits', () => {
  it('a Server bucket: burst at once, then qps per second, then a 429 in Kubernetes words', async () => {
    const { p, tick } = plugin([{ type: 'Server', qps: 2, burst: 3, cacheSize: 0 }]);
    for (let i = 0; i < 3; i++) await post(p);
    const s = await failure(post(p, { ns: 'other' }));
    expect([s.code, s.reason, s.message, s.details]).toEqual([
      429,
      'TooManyRequests',
      'Too many requests: limit reached on type Server for key ',
      undefined,
    ]);
    tick(500);
    await post(p);
    await failure(post(p));
    tick(10_000);
    for (let i = 0; i < 3; i++) await post(p);
    await failure(post(p));
  });

  it('Namespace, User and SourceAndObject buckets are per key', async () => {
    const { p } = plugin([
      { type: 'Namespace', qps: 1, burst: 1, cacheSize: 0 },
      { type: 'User', qps: 1, burst: 2, cacheSize: 0 },
    ]);
    await post(p, { ns: 'a', user: 'alice' });
    await post(p, { ns: 'b', user: 'alice' });
    expect((await failure(post(p, { ns: 'c', user: 'alice' }))).message).toBe(
      'Too many requests: limit reached on type User for key alice',
    );
    expect((await failure(post(p, { ns: 'a', user: 'alice' }))).message).toBe(
      'Too many requests: [limit reached on type Namespace for key a, limit reached on type User for key alice]',
    );
    const so = plugin([{ type: 'SourceAndObject', qps: 1, burst: 1, cacheSize: 0 }]).p;
    await post(so, { name: 'x' });
    await post(so, { name: 'y' });
    expect((await failure(post(so, { name: 'x' }))).message).toBe(
      'Too many requests: limit reached on type SourceAndObject for key svclethPodaxuv1',
    );
  });

  it('forgets the least recently used key beyond cacheSize', async () => {
    const { p } = plugin([{ type: 'Namespace', qps: 1, burst: 1, cacheSize: 2 }]);
    await post(p, { ns: 'a' });
    await post(p, { ns: 'b' });
    await post(p, { ns: 'c' });
    await post(p, { ns: 'a' });
    await failure(post(p, { ns: 'c' }));
  });

  it('ignores dry runs, deletes and everything but core Events', async () => {
    const { p } = plugin([{ type: 'Server', qps: 1, burst: 1, cacheSize: 0 }]);
    await post(p, { dryRun: true });
    await post(p, { dryRun: true });
    await p.validate(attributes({ resource: 'configmaps', object: { metadata: { name: 'c', namespace: 'a' } } }));
    await p.validate(attributes({ resource: 'events', operation: 'DELETE', oldObject: event() }));
    await p.validate(attributes({ resource: 'events.svc.io/v1/events', object: event() }));
    await post(p);
    await failure(post(p));
  });
});
