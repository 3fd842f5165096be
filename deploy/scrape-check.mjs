// Scrapes every target of a Prometheus configuration once, as Prometheus would (scheme,
// bearer credentials file, TLS CA or skip-verify), and prints one line per target:
// "<job> <target> <status> <samples>". Exits 1 unless every target answered 200 with
// metrics in the text format. Run it where the targets resolve, e.g. on the compose network:
//   docker compose run --rm --no-deps init node deploy/scrape-check.mjs deploy/prometheus.yml
import { readFileSync } from 'node:fs';
import { request } from 'node:https';
import { request as plainRequest } from 'node:http';
import { createRequire } from 'node:module';

const { parse } = createRequire(new URL('../packages/client/package.json', import.meta.url))('yaml');
const config = parse(readFileSync(process.argv[2] ?? new URL('prometheus.yml', import.meta.url), 'utf8'));

function scrape(job, target) {
  const https = job.scheme === 'https';
  const tls = job.tls_config ?? {};
  const headers = { Accept: 'text/plain' };
  const credentials = job.authorization?.credentials_file;
  if (credentials) headers.Authorization = `Bearer ${readFileSync(credentials, 'utf8').trim()}`;
  const [host, port] = target.split(':');
  const options = {
    host,
    port,
    path: job.metrics_path ?? '/metrics',
    headers,
    timeout: 5000,
    ...(https
      ? tls.ca_file
        ? { ca: readFileSync(tls.ca_file), servername: host }
        : { rejectUnauthorized: !tls.insecure_skip_verify }
      : {}),
  };
  return new Promise((resolve) => {
    const req = (https ? request : plainRequest)(options, (res) => {
      let text = '';
      res
        .setEncoding('utf8')
        .on('data', (c) => {
          text += c;
        })
        .on('end', () => {
          const samples = text.split('\n').filter((l) => l && !l.startsWith('#')).length;
          resolve({
            status: res.statusCode,
            samples,
            ok: res.statusCode === 200 && /^# TYPE /m.test(text) && samples > 0,
          });
        });
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', (e) => resolve({ status: e.message, samples: 0, ok: false }));
    req.end();
  });
}

let failed = 0;
for (const job of config.scrape_configs) {
  for (const target of job.static_configs.flatMap((s) => s.targets)) {
    const r = await scrape(job, target);
    if (!r.ok) failed++;
    console.log(`${job.job_name} ${target} ${r.status} ${r.samples}`);
  }
}
process.exit(failed ? 1 : 0);
