import type { Pod } from '@svc/api';
import { buildSummary, nodeMemoryAndBoot } from './stats-summary.js';

const pod = (name: string, uid: string): Pod =>
  ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'ns', uid },
    spec: { containers: [] },
    status: { startTime: '2026-11-28T09:00:00Z' },
  }) as Pod;

describe('the Summary API', () => {
  const at = Date.parse('2026-11-28T09:00:10Z');
  const summary = buildSummary({
    nodeName: 'node-1',
    bootMs: Date.parse('2026-11-28T08:00:00Z'),
    node: { cpuSeconds: 12.5, memory: { totalBytes: 8_000, freeBytes: 3_000, availableBytes: 5_000 } },
    containers: [
      { namespace: 'ns', pod: 'web', container: 'a', cpuSeconds: 2, memoryBytes: 100, startedAtMs: at - 5_000 },
      { namespace: 'ns', pod: 'web', container: 'b', cpuSeconds: 1, memoryBytes: 50 },
      { namespace: 'ns', pod: 'gone', container: 'c', cpuSeconds: 1, memoryBytes: 1 },
    ],
    pods: [pod('web', 'u-1'), pod('idle', 'u-2')],
    timestampMs: at,
    rates: new Map([
      ['node', 0.25],
      ['ns/web/a', 0.5],
      ['ns/web/b', 0.125],
    ]),
  });

  it("names the node's CPU and memory as the kubelet's stats/v1alpha1 does", () => {
    expect(summary.node).toEqual({
      nodeName: 'node-1',
      startTime: '2026-11-28T08:00:00Z',
      cpu: { time: '2026-11-28T09:00:10Z', usageNanoCores: 250_000_000, usageCoreNanoSeconds: 12_500_000_000 },
      memory: { time: '2026-11-28T09:00:10Z', availableBytes: 5_000, usageBytes: 5_000, workingSetBytes: 3_000 },
    });
  });

  it('sums each pod of this node over its containers; pods without usage and usage without a pod are left out', () => {
    expect(summary.pods).toHaveLength(1);
    const [web] = summary.pods;
    expect(web?.podRef).toEqual({ name: 'web', namespace: 'ns', uid: 'u-1' });
    expect(web?.startTime).toBe('2026-11-28T09:00:00Z');
    expect(web?.containers.map((c) => [c.name, c.startTime, c.cpu.usageNanoCores, c.memory.workingSetBytes])).toEqual([
      ['a', '2026-11-28T09:00:05Z', 500_000_000, 100],
      ['b', undefined, 125_000_000, 50],
    ]);
    expect(web?.cpu).toMatchObject({ usageNanoCores: 625_000_000, usageCoreNanoSeconds: 3_000_000_000 });
    expect(web?.memory).toMatchObject({ workingSetBytes: 150, usageBytes: 150 });
  });

  it('leaves usageNanoCores out where no rate is known yet', () => {
    const s = buildSummary({
      nodeName: 'n',
      node: { cpuSeconds: 1, memory: { totalBytes: 1, freeBytes: 1, availableBytes: 1 } },
      containers: [{ namespace: 'ns', pod: 'web', container: 'a', cpuSeconds: 2, memoryBytes: 1 }],
      pods: [pod('web', 'u')],
      timestampMs: at,
      rates: new Map(),
    });
    expect(s.node.cpu).not.toHaveProperty('usageNanoCores');
    expect(s.pods[0]?.cpu).not.toHaveProperty('usageNanoCores');
    expect(s.node).not.toHaveProperty('startTime');
  });

  it('reads the memory totals and boot time of this machine', async () => {
    const { memory, bootMs } = await nodeMemoryAndBoot();
    expect(memory.totalBytes).toBeGreaterThan(memory.availableBytes);
    expect(memory.availableBytes).toBeGreaterThan(0);
    expect(bootMs).toBeLessThan(Date.now());
  });
});
