import { waitFor } from '@svc/testing';
import { startSvcctlEnv, type SvcctlEnv } from '../svcctl-testing.js';

describe('svcctl get -w', () => {
  let env: SvcctlEnv;
  beforeAll(async () => {
    env = await startSvcctlEnv({ args: ['--naming=kubernetes'] });
    await env.kube.ok(['create', 'namespace', 'watched']);
    await env.kube.ok(['create', 'configmap', 'first-one', '-n', 'watched']);
  });
  afterAll(() => env.stop());

  /** Runs a watch until `until` holds for its output, doing `act` once it printed its first line. */
  async function watching(
    args: string[],
    o: { act: () => Promise<unknown>; until: (out: string) => boolean; listed?: (out: string) => boolean },
  ): Promise<string> {
    const ac = new AbortController();
    let out = '';
    const done = env.run(args, { signal: ac.signal, onOut: (s) => (out += s) });
    // The list comes first (when it is printed, act only after it, so the change is not in it); the
    // watch starts at some point after: act until its output shows the change.
    const listed = o.listed;
    if (listed) await waitFor('the list', () => listed(out));
    await waitFor(
      'the watch output',
      async () => {
        if (o.until(out)) return true;
        await o.act();
        return o.until(out);
      },
      { intervalMs: 200 },
    );
    ac.abort();
    const r = await done;
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    return out;
  }

  it('prints the list, then each change as a row lined up with it (kubectl remembers column widths)', async () => {
    const listed = (await env.kubectl(['get', 'cm', '-n', 'watched'])).stdout;
    const out = await watching(['get', 'cm', '-n', 'watched', '-w'], {
      act: () => env.kubectl(['create', 'configmap', 'x', '-n', 'watched', '--from-literal=a=b']),
      until: (s) => /\nx +1 /.test(s),
      listed: (s) => s.includes('first-one'),
    });
    const lines = out.split('\n');
    expect(
      lines
        .slice(0, 2)
        .join('\n')
        .replace(/\d+s\b/g, 'AGE'),
    ).toBe(listed.trimEnd().replace(/\d+s\b/g, 'AGE'));
    const header = lines[0] ?? '';
    const row = lines.find((l) => l.startsWith('x ')) ?? '';
    expect(row.indexOf('1')).toBe(header.indexOf('DATA'));
  });

  it('--watch-only prints only the changes; -o name and --output-watch-events', async () => {
    const names = await watching(['get', 'cm', '-n', 'watched', '--watch-only', '-o', 'name'], {
      act: () => env.kube.ok(['label', 'configmap', 'first-one', '-n', 'watched', `a=${Date.now()}`, '--overwrite']),
      until: (s) => s.includes('configmap/first-one'),
    });
    expect(names).toMatch(/^(configmap\/first-one\n)+$/);
    const events = await watching(
      ['get', 'cm', 'first-one', '-n', 'watched', '--watch-only', '--output-watch-events'],
      {
        act: () => env.kube.ok(['label', 'configmap', 'first-one', '-n', 'watched', `b=${Date.now()}`, '--overwrite']),
        until: (s) => s.includes('MODIFIED'),
      },
    );
    expect(events).toMatch(/^EVENT +NAME +DATA +AGE\n(MODIFIED +first-one +0 +\d+s\n)+$/);
  });
});
