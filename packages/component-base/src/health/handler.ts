import type { Request, Response } from 'express';
import type { HealthCheck } from './checks.js';

interface Outcome {
  name: string;
  ok: boolean;
  excluded: boolean;
}

async function run(checks: readonly HealthCheck[], excluded: Set<string>): Promise<Outcome[]> {
  return Promise.all(
    checks.map(async (c) => {
      if (excluded.has(c.name)) return { name: c.name, ok: true, excluded: true };
      try {
        await c.check();
        return { name: c.name, ok: true, excluded: false };
      } catch {
        return { name: c.name, ok: false, excluded: false };
      }
    }),
  );
}

/**
 * `/livez`, `/readyz`, `/healthz` and `/<endpoint>/<check>`: 200 when every included check
 * passes, else 500. Verbose (or failing) answers list each check; reasons are withheld.
 */
export function healthHandler(checks: () => readonly HealthCheck[]) {
  return async (req: Request, res: Response, single?: string): Promise<void> => {
    res.type('text/plain; charset=utf-8').setHeader('X-Content-Type-Options', 'nosniff');
    const all = checks();
    if (single !== undefined) {
      const c = all.find((x) => x.name === single);
      if (!c) {
        res.status(404).send('404 page not found\n');
        return;
      }
      try {
        await c.check();
        res.status(200).send('ok');
      } catch {
        res.status(500).send(`internal server error: ${single} failed: reason withheld\n`);
      }
      return;
    }
    const query = new URLSearchParams(req.originalUrl.split('?')[1] ?? '');
    const excluded = new Set(
      query
        .getAll('exclude')
        .flatMap((v) => v.split(','))
        .filter((v) => v !== ''),
    );
    const outcomes = await run(all, excluded);
    const failed = outcomes.some((o) => !o.ok);
    const verbose = query.has('verbose');
    if (!failed && !verbose) {
      res.status(200).send('ok');
      return;
    }
    const lines = outcomes.map((o) =>
      o.excluded ? `[+]${o.name} excluded: ok` : o.ok ? `[+]${o.name} ok` : `[-]${o.name} failed: reason withheld`,
    );
    const unknown = [...excluded].filter((n) => !all.some((c) => c.name === n));
    if (unknown.length > 0)
      lines.push(
        `warn: some health checks cannot be excluded: no matches for ${unknown.map((u) => JSON.stringify(u)).join(',')}`,
      );
    lines.push(failed ? 'healthz check failed' : 'healthz check passed');
    res.status(failed ? 500 : 200).send(lines.join('\n') + '\n');
  };
}
