import { Registry } from 'prom-client';
import { Dispatcher, dealHand, type Decision, type DispatchClock, type LevelLimits } from './dispatcher.js';
import { FlowControlMetrics } from './metrics.js';
import type { WorkEstimate } from './work-estimator.js';

// The dispatcher on a simulated clock: requests "run" for a set time of that clock, so the
// properties below are exact and do not depend on the machine's speed.

class FakeClock implements DispatchClock {
  private t = 0;
  private seq = 0;
  private timers: Array<{ at: number; seq: number; fn: () => void }> = [];

  now(): number {
    return this.t;
  }

  after(ms: number, fn: () => void): () => void {
    const timer = { at: this.t + ms, seq: this.seq++, fn };
    this.timers.push(timer);
    return () => {
      this.timers = this.timers.filter((x) => x !== timer);
    };
  }

  /** Runs every timer due until `to`, in order, each at its own time. */
  advanceTo(to: number): void {
    for (;;) {
      const next = this.timers.filter((x) => x.at <= to).sort((a, b) => a.at - b.at || a.seq - b.seq)[0];
      if (!next) break;
      this.timers = this.timers.filter((x) => x !== next);
      this.t = next.at;
      next.fn();
    }
    this.t = to;
  }
}

const limits = (o: Partial<LevelLimits> = {}): LevelLimits => ({
  exempt: false,
  reject: false,
  nominal: 10,
  lendable: 0,
  borrowingLimit: 0,
  queues: 8,
  handSize: 1,
  queueLengthLimit: 1000,
  maxSeats: 10,
  ...o,
});

const seats = (n: number): WorkEstimate => ({ initialSeats: n, finalSeats: 0, additionalLatencyMs: 0 });

function setup(levels: Record<string, LevelLimits>): {
  clock: FakeClock;
  d: Dispatcher;
  registry: Registry;
} {
  const clock = new FakeClock();
  const registry = new Registry();
  const d = new Dispatcher(new FlowControlMetrics(registry), clock);
  d.configure(new Map(Object.entries(levels)));
  return { clock, d, registry };
}

/** Two flow names whose hands (of one queue out of `deck`) differ. */
function flowsInDifferentQueues(deck: number): [string, string] {
  const a = 'fs\u0000a';
  const qa = dealHand(a, deck, 1)[0];
  for (let i = 0; ; i++) {
    const b = `fs\u0000b${i}`;
    if (dealHand(b, deck, 1)[0] !== qa) return [a, b];
  }
}

interface Flow {
  flow: string;
  width: number;
  serviceMs: number;
}

/**
 * Keeps `backlog` requests of each flow waiting or running: each runs for its service time,
 * then releases its seats and the flow sends another. Resolves the seat-seconds each flow got
 * between `fromMs` and `toMs` (by dispatch time).
 */
function backlogged(
  o: { clock: FakeClock; d: Dispatcher; level: string },
  flows: Flow[],
  run: { backlog: number; fromMs: number; toMs: number },
): number[] {
  const { clock, d } = o;
  const level = d.level(o.level);
  if (!level) throw new Error('no level');
  const got = flows.map(() => 0);
  const send = (i: number): void => {
    const f = flows[i] as Flow;
    d.request(
      { level, flowSchema: 'fs', flow: f.flow, estimate: seats(f.width), waitLimitMs: 3_600_000 },
      (decision: Decision) => {
        if ('rejected' in decision) throw new Error(`rejected: ${decision.rejected}`);
        const t = clock.now();
        if (t >= run.fromMs && t < run.toMs) got[i] = (got[i] ?? 0) + (f.width * f.serviceMs) / 1000;
        clock.after(f.serviceMs, () => {
          decision.release();
          send(i);
        });
      },
    );
  };
  for (let i = 0; i < flows.length; i++) for (let k = 0; k < run.backlog; k++) send(i);
  clock.advanceTo(run.toMs);
  return got;
}

describe('the dispatcher: fair queuing by virtual finish time', () => {
  it('gives two backlogged flows of different widths equal seat-seconds', () => {
    const { clock, d } = setup({ l: limits() });
    const [a, b] = flowsInDifferentQueues(8);
    const [narrow, wide] = backlogged(
      { clock, d, level: 'l' },
      [
        { flow: a, width: 1, serviceMs: 100 },
        { flow: b, width: 5, serviceMs: 100 },
      ],
      { backlog: 30, fromMs: 5_000, toMs: 65_000 },
    );
    // 10 seats for 60 s: 600 seat-seconds, about half each.
    expect((narrow ?? 0) + (wide ?? 0)).toBeGreaterThan(550);
    expect((narrow ?? 0) / (wide ?? 1)).toBeGreaterThan(0.9);
    expect((narrow ?? 0) / (wide ?? 1)).toBeLessThan(1.1);
  });

  it('gives equal seat-seconds to flows whose requests take different times', () => {
    const { clock, d } = setup({ l: limits() });
    const [a, b] = flowsInDifferentQueues(8);
    const [short, long] = backlogged(
      { clock, d, level: 'l' },
      [
        { flow: a, width: 1, serviceMs: 20 },
        { flow: b, width: 1, serviceMs: 400 },
      ],
      { backlog: 30, fromMs: 5_000, toMs: 65_000 },
    );
    expect((short ?? 0) / (long ?? 1)).toBeGreaterThan(0.85);
    expect((short ?? 0) / (long ?? 1)).toBeLessThan(1.15);
  });

  it('does not starve a narrow request behind a flow of wide ones', () => {
    const { clock, d } = setup({ l: limits() });
    const level = d.level('l');
    if (!level) throw new Error('no level');
    const [a, b] = flowsInDifferentQueues(8);
    // The wide flow: 50 requests of all 10 seats waiting, 100 ms each.
    for (let k = 0; k < 50; k++)
      d.request({ level, flowSchema: 'fs', flow: b, estimate: seats(10), waitLimitMs: 3_600_000 }, (x) => {
        if ('release' in x) clock.after(100, x.release);
      });
    clock.advanceTo(1_000);
    let startedAt: number | undefined;
    d.request({ level, flowSchema: 'fs', flow: a, estimate: seats(1), waitLimitMs: 3_600_000 }, (x) => {
      if ('release' in x) {
        startedAt = clock.now();
        clock.after(10, x.release);
      }
    });
    clock.advanceTo(1_250);
    // In first-come order it would wait for the 40 wide requests before it (4 s); it waits
    // for the one running and at most one more.
    expect(startedAt).toBeDefined();
    expect((startedAt ?? Infinity) - 1_000).toBeLessThanOrEqual(200);
    expect(level.waiting).toBeGreaterThan(30);
  });

  it("holds a wide request's seats, and its final seats for the additional latency, in the executing-seats metric", async () => {
    const { clock, d, registry } = setup({ l: limits() });
    const level = d.level('l');
    if (!level) throw new Error('no level');
    const seatsNow = async (): Promise<number> => {
      const m = await registry.getSingleMetric('apiserver_flowcontrol_current_executing_seats')?.get();
      return m?.values.find((v) => v.labels.priority_level === 'l')?.value ?? 0;
    };
    let release = (): void => undefined;
    d.request({ level, flowSchema: 'fs', flow: 'x', estimate: seats(6), waitLimitMs: 1000 }, (x) => {
      if ('release' in x) release = x.release;
    });
    expect(await seatsNow()).toBe(6);
    // 4 seats left: a 5-seat request waits until they are 10 again.
    const order: string[] = [];
    d.request({ level, flowSchema: 'fs', flow: 'y', estimate: seats(5), waitLimitMs: 10_000 }, (x) => {
      if ('release' in x) order.push('y');
    });
    expect(order).toEqual([]);
    release();
    expect(order).toEqual(['y']);
    expect(await seatsNow()).toBe(5);

    // A write notifying watchers: 1 seat while it runs, 3 for 5 ms after.
    let write = (): void => undefined;
    d.request(
      {
        level,
        flowSchema: 'fs',
        flow: 'z',
        estimate: { initialSeats: 1, finalSeats: 3, additionalLatencyMs: 5 },
        waitLimitMs: 1000,
      },
      (x) => {
        if ('release' in x) write = x.release;
      },
    );
    expect(await seatsNow()).toBe(8);
    write();
    expect(await seatsNow()).toBe(8);
    clock.advanceTo(clock.now() + 5);
    expect(await seatsNow()).toBe(5);
  });

  it('refuses a full queue only while the level is full, times a wait out and lets a cancelled one go', () => {
    const { clock, d } = setup({ l: limits({ nominal: 1, queues: 1, queueLengthLimit: 1, maxSeats: 1 }) });
    const level = d.level('l');
    if (!level) throw new Error('no level');
    const outcomes: string[] = [];
    const ask = (o: { waitLimitMs: number; signal?: AbortSignal }): (() => void) => {
      let release = (): void => undefined;
      d.request({ level, flowSchema: 'fs', flow: 'f', estimate: seats(1), ...o }, (x) => {
        if ('rejected' in x) outcomes.push(x.rejected);
        else {
          outcomes.push('run');
          release = x.release;
        }
      });
      return () => release();
    };
    const first = ask({ waitLimitMs: 1000 });
    ask({ waitLimitMs: 1000 });
    ask({ waitLimitMs: 1000 });
    expect(outcomes).toEqual(['run', 'queue-full']);
    clock.advanceTo(1000);
    expect(outcomes).toEqual(['run', 'queue-full', 'time-out']);
    const abort = new AbortController();
    ask({ waitLimitMs: 1000, signal: abort.signal });
    abort.abort();
    expect(outcomes.at(-1)).toBe('cancelled');
    first();
    ask({ waitLimitMs: 1000 });
    expect(outcomes.at(-1)).toBe('run');
    expect(level.waiting).toBe(0);
  });

  it("lets a level borrow others' lendable seats and take them back as they free", () => {
    const { d } = setup({
      lender: limits({ nominal: 4, lendable: 4, borrowingLimit: 0 }),
      borrower: limits({ nominal: 2, lendable: 0, borrowingLimit: Infinity }),
    });
    const borrower = d.level('borrower');
    const lender = d.level('lender');
    if (!borrower || !lender) throw new Error('no level');
    const releases: Array<() => void> = [];
    let ran = 0;
    for (let i = 0; i < 8; i++)
      d.request({ level: borrower, flowSchema: 'fs', flow: `f${i}`, estimate: seats(1), waitLimitMs: 1000 }, (x) => {
        if ('release' in x) {
          ran++;
          releases.push(x.release);
        }
      });
    expect(ran).toBe(6); // its 2 and the lender's 4
    let lenderRan = 0;
    d.request({ level: lender, flowSchema: 'fs', flow: 'l', estimate: seats(1), waitLimitMs: 1000 }, (x) => {
      if ('release' in x) lenderRan++;
    });
    expect(lenderRan).toBe(0);
    // A seat freed goes to the lender's waiting request, the borrower's keep waiting.
    releases.shift()?.();
    expect(lenderRan).toBe(1);
  });
});
