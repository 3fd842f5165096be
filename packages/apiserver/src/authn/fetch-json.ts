import { request } from 'node:https';

const MAX_BYTES = 1024 * 1024;

export interface FetchJsonOptions {
  /** PEM CA bundle to trust instead of the host's roots. */
  ca?: string;
  timeoutMs?: number;
  signal?: AbortSignal;
}

/** GETs a JSON document over HTTPS; anything but a 200 with a JSON body (≤ 1 MiB) is an error. */
export function fetchJson(url: string, o: FetchJsonOptions = {}): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    if (u.protocol !== 'https:') {
      reject(new Error(`${url}: only https URLs are fetched`));
      return;
    }
    const req = request(
      u,
      {
        method: 'GET',
        headers: { accept: 'application/json' },
        ca: o.ca,
        timeout: o.timeoutMs ?? 10_000,
        signal: o.signal,
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size > MAX_BYTES) req.destroy(new Error(`${url}: response larger than ${MAX_BYTES} bytes`));
          else chunks.push(c);
        });
        res.on('error', reject);
        res.on('end', () => {
          if (res.statusCode !== 200) {
            reject(new Error(`${url}: ${res.statusCode ?? 0} ${res.statusMessage ?? ''}`.trim()));
            return;
          }
          try {
            resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')));
          } catch (e) {
            reject(new Error(`${url}: not JSON: ${(e as Error).message}`));
          }
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${url}: timed out`)));
    req.on('error', reject);
    req.end();
  });
}
