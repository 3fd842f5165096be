// Health probe for docker-compose.yml: exits 0 when GET <url> answers 200.
// Usage: node deploy/probe.mjs <https url> [CA file]; without a CA file the serving
// certificate is not verified (the self-signed ones of the controller manager and scheduler).
import { readFileSync } from 'node:fs';
import { get } from 'node:https';

const [url, caFile] = process.argv.slice(2);
const tls = caFile ? { ca: readFileSync(caFile) } : { rejectUnauthorized: false };
get(url, { ...tls, timeout: 3000 }, (res) => {
  res.resume();
  process.exit(res.statusCode === 200 ? 0 : 1);
})
  .on('error', () => process.exit(1))
  .on('timeout', () => process.exit(1));
