import { rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { ConfigurationError } from '../options.js';
import type { ProfilingHandler } from './profiling.js';

export interface DebugSocket {
  close(): Promise<void>;
}

/**
 * `--debug-socket-path`: the profiling endpoints over plain HTTP on a unix socket, with no
 * authentication or authorization (as Kubernetes': whoever may open the file may profile).
 * A file left at the path is replaced; a path that cannot be bound stops start-up (exit 2).
 */
export async function serveDebugSocket(path: string, profiling: ProfilingHandler): Promise<DebugSocket> {
  try {
    rmSync(path, { force: true });
  } catch (e) {
    throw new ConfigurationError(`--debug-socket-path: failed to remove ${path}: ${(e as Error).message}`);
  }
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    profiling(req, res, path).then(
      (served) => {
        if (served) return;
        res.statusCode = 404;
        res.setHeader('Content-Type', 'text/plain; charset=utf-8');
        res.end('404 page not found\n');
      },
      (e: unknown) => {
        if (res.headersSent) res.destroy();
        else {
          res.statusCode = 500;
          res.end(`${e instanceof Error ? e.message : String(e)}\n`);
        }
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (e) =>
      reject(new ConfigurationError(`--debug-socket-path: listen error (${path}): ${e.message}`)),
    );
    server.listen(path, () => resolve());
  });
  return {
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
