import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { startEtcd, type EtcdHandle } from './etcd.js';

async function put(
  endpoint: string,
  { key, value }: { key: string; value: string },
  timeoutMs = 5000,
): Promise<{ header: { revision: string } }> {
  const res = await fetch(`${endpoint}/v3/kv/put`, {
    method: 'POST',
    body: JSON.stringify({ key: Buffer.from(key).toString('base64'), value: Buffer.from(value).toString('base64') }),
    signal: AbortSignal.timeout(timeoutMs),
  });
  if (!res.ok) throw new Error(`put: HTTP ${res.status}`);
  return (await res.json()) as { header: { revision: string } };
}

async function get(endpoint: string, key: string): Promise<string | undefined> {
  const res = await fetch(`${endpoint}/v3/kv/range`, {
    method: 'POST',
    body: JSON.stringify({ key: Buffer.from(key).toString('base64') }),
    signal: AbortSignal.timeout(5000),
  });
  if (!res.ok) throw new Error(`range: HTTP ${res.status}`);
  const body = (await res.json()) as { kvs?: { value?: string }[] };
  const v = body.kvs?.[0]?.value;
  return v === undefined ? undefined : Buffer.from(v, 'base64').toString('utf8');
}

/** Whether any process has `needle` (a unique temporary directory) on its command line. */
function isAlive(needle: string): boolean {
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(needle)) return true;
    } catch {
      /* gone */
    }
  }
  return false;
}

describe('startEtcd', () => {
  it('starts a writable single member and stops it, leaving nothing behind', async () => {
    const t0 = Date.now();
    const etcd = await startEtcd();
    const started = Date.now() - t0;
    try {
      expect(etcd.endpoints).toHaveLength(1);
      const r = await put(etcd.endpoints[0] ?? '', { key: 'a', value: '1' });
      expect(r.header.revision).toBe('2');
      expect(await get(etcd.endpoints[0] ?? '', 'a')).toBe('1');
      expect(isAlive(etcd.dataDir)).toBe(true);
    } finally {
      const t1 = Date.now();
      await etcd.stop();
      process.stderr.write(`single member: start ${started} ms, stop ${Date.now() - t1} ms\n`);
    }
    expect(isAlive(etcd.dataDir)).toBe(false);
    expect(existsSync(etcd.dataDir)).toBe(false);
    await etcd.stop(); // idempotent
  });

  it('kills and restarts a single member keeping its data', async () => {
    const etcd = await startEtcd();
    try {
      const ep = etcd.endpoints[0] ?? '';
      await put(ep, { key: 'k', value: 'v' });
      await etcd.killMember(0);
      await expect(get(ep, 'k')).rejects.toThrow();
      await etcd.restartMember(0);
      expect(await get(ep, 'k')).toBe('v');
    } finally {
      await etcd.stop();
    }
  });

  it('starts a three-member cluster, survives losing the leader, and stops it', async () => {
    const t0 = Date.now();
    const etcd: EtcdHandle = await startEtcd({ members: 3 });
    const started = Date.now() - t0;
    try {
      expect(etcd.endpoints).toHaveLength(3);
      await put(etcd.endpoints[0] ?? '', { key: 'x', value: '1' });
      for (const ep of etcd.endpoints) expect(await get(ep, 'x')).toBe('1');
      const leader = await etcd.leaderIndex();
      await etcd.killMember(leader);
      const other = etcd.endpoints[(leader + 1) % 3] ?? '';
      // Writes resume once the two remaining members elect a new leader.
      const deadline = Date.now() + 10_000;
      for (;;) {
        // A proposal forwarded to the dead leader is lost and hangs until etcd's request
        // timeout (~5 s), so each attempt gets a short deadline.
        try {
          await put(other, { key: 'x', value: '2' }, 1000);
          break;
        } catch (err) {
          if (Date.now() > deadline) throw err;
        }
      }
      await etcd.restartMember(leader);
      expect(await get(etcd.endpoints[leader] ?? '', 'x')).toBe('2');
    } finally {
      const t1 = Date.now();
      await etcd.stop();
      process.stderr.write(`three members: start ${started} ms, stop ${Date.now() - t1} ms\n`);
    }
    expect(isAlive(etcd.dataDir)).toBe(false);
  });
});
