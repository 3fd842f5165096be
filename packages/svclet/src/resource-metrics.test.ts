// The svclet's /metrics/resource text (kubelet 1.32's names, labels and HELP) and the usage of a
// real process group read from /proc.
import { spawn } from 'node:child_process';
import { waitFor } from '@svc/testing';
import { nodeUsage, processGroupUsage, renderResourceMetrics } from './resource-metrics.js';

describe('resource metrics', () => {
  it("renders kubelet 1.32's families, labels and timestamps", () => {
    const text = renderResourceMetrics({
      node: { cpuSeconds: 12.5, memoryBytes: 1000 },
      containers: [
        {
          namespace: 'ns',
          pod: 'p',
          container: 'a',
          cpuSeconds: 1.25,
          memoryBytes: 100,
          startedAtMs: 1_700_000_000_000,
        },
        { namespace: 'ns', pod: 'p', container: 'b', cpuSeconds: 0.75, memoryBytes: 50 },
      ],
      scrapeError: false,
      timestampMs: 42,
    });
    const lines = text.split('\n');
    expect(lines).toEqual(
      expect.arrayContaining([
        '# HELP container_cpu_usage_seconds_total [STABLE] Cumulative cpu time consumed by the container in core-seconds',
        '# TYPE container_cpu_usage_seconds_total counter',
        'container_cpu_usage_seconds_total{container="a",namespace="ns",pod="p"} 1.25 42',
        'container_memory_working_set_bytes{container="b",namespace="ns",pod="p"} 50 42',
        'container_start_time_seconds{container="a",namespace="ns",pod="p"} 1700000000 42',
        'pod_cpu_usage_seconds_total{namespace="ns",pod="p"} 2 42',
        'pod_memory_working_set_bytes{namespace="ns",pod="p"} 150 42',
        'node_cpu_usage_seconds_total 12.5 42',
        'node_memory_working_set_bytes 1000 42',
        'resource_scrape_error 0',
        'scrape_error 0',
      ]),
    );
  });

  it('reads the CPU and memory of a process group from /proc', async () => {
    const child = spawn('sh', ['-c', 'sh -c "while :; do :; done" & while :; do :; done'], {
      detached: true,
      stdio: 'ignore',
    });
    const pgid = child.pid ?? 0;
    try {
      const u = await waitFor(
        'the group to use CPU',
        async () => {
          const x = (await processGroupUsage([pgid])).get(pgid);
          return x && x.cpuSeconds >= 0.2 ? x : undefined;
        },
        { timeoutMs: 20_000 },
      );
      expect(u.memoryBytes).toBeGreaterThan(0);
      expect((await processGroupUsage([999_999_999])).size).toBe(0);
      const node = await nodeUsage();
      expect(node.cpuSeconds).toBeGreaterThan(0);
      expect(node.memoryBytes).toBeGreaterThan(0);
    } finally {
      process.kill(-pgid, 'SIGKILL');
    }
  });
});
