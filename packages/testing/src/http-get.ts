import { createHash } from 'node:crypto';
import { request as httpRequest } from 'node:http';

/** GETs `http://127.0.0.1:<port><path>` on a fresh connection; resolves with the whole body. */
export function httpGetLocal(port: number, path: string): Promise<Buffer> {
  return new Promise((ok, fail) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, agent: false }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (b: Buffer) => parts.push(b));
      res.on('end', () => ok(Buffer.concat(parts)));
      res.on('error', fail);
    });
    req.on('error', fail);
    req.end();
  });
}

/** Hex SHA-256 of `b`: compares large transferred bodies in an assertion message of sane size. */
export function sha256Hex(b: Buffer): string {
  return createHash('sha256').update(b).digest('hex');
}
