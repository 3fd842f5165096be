import { NodeInfo } from './node-info.js';
import { findFeasibleNodes, numFeasibleNodesToFind } from './feasible-nodes.js';
import type { FilterStatus } from './filters.js';

function nodes(n: number): NodeInfo[] {
  return Array.from({ length: n }, (_, i) => new NodeInfo(`n${i}`));
}
const refused: FilterStatus = { plugin: 'NodeUnschedulable', code: 'UnschedulableAndUnresolvable', reasons: ['x'] };

describe('feasible nodes per cycle (percentageOfNodesToScore unset)', () => {
  it("looks for Kubernetes' adaptive number of nodes: all under 100, 50 - n/125 percent, at least 5 % and 100", () => {
    expect([1, 99, 100, 200, 1000, 1500, 5000, 6000, 20000].map(numFeasibleNodesToFind)).toEqual([
      1, 99, 100, 100, 420, 570, 500, 300, 1000,
    ]);
  });

  it('stops once enough fit, and the next cycle starts where this one stopped, wrapping round', () => {
    const all = nodes(1000);
    const first = findFeasibleNodes(all, { start: 0, filter: () => undefined });
    expect(first.feasible).toHaveLength(420);
    expect(first.processed).toBe(420);
    expect(first.feasible[0]?.name).toBe('n0');
    const next = findFeasibleNodes(all, { start: 900, filter: () => undefined });
    expect(next.feasible.map((n) => n.name).slice(99, 101)).toEqual(['n999', 'n0']);
  });

  it('goes over every node when too few fit, keeping each refusal for the FailedScheduling message', () => {
    const all = nodes(300);
    // 300 nodes: 144 wanted (48 %); only every sixth fits, so all 300 are looked at.
    const few = findFeasibleNodes(all, {
      start: 7,
      filter: (n) => (Number(n.name.slice(1)) % 6 ? refused : undefined),
    });
    expect(few.feasible).toHaveLength(50);
    expect(few.statuses).toHaveLength(250);
    expect(few.processed).toBe(300);
    const none = findFeasibleNodes(all, { start: 7, filter: () => refused });
    expect(none).toEqual({ feasible: [], statuses: all.map(() => refused), processed: 300 });
  });
});
