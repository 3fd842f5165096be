import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';

/**
 * Ports on 127.0.0.1 that were free a moment ago (distinct from each other). They are not
 * reserved: another process may take one before the caller binds it, so callers that
 * cannot bind to port 0 (etcd must advertise its URL) must be ready to retry with fresh
 * ports.
 */
export async function freePorts(n: number): Promise<number[]> {
  const servers: Server[] = [];
  try {
    const ports: number[] = [];
    for (let i = 0; i < n; i++) {
      const server = createServer();
      servers.push(server);
      ports.push(await listenOn(server, 0));
    }
    return ports;
  } finally {
    await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
  }
}

/** One port on 127.0.0.1 that was free a moment ago; see `freePorts`. */
export async function freePort(): Promise<number> {
  const [port] = await freePorts(1);
  if (port === undefined) throw new Error('could not find a free port');
  return port;
}

/** Listens on 127.0.0.1:`port` (0: any); resolves with the port, rejects when it is taken. */
function listenOn(server: Server, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.unref();
    server.once('error', reject);
    server.listen({ host: '127.0.0.1', port, exclusive: true }, () => {
      const address = server.address();
      if (typeof address === 'object' && address !== null) resolve(address.port);
      else reject(new Error('could not determine the listening port'));
    });
  });
}

/**
 * A port on 127.0.0.1 that nothing listens on, for tests of a refused connection. It is taken
 * from 10000 up to the kernel's ephemeral range (and below 30000, the NodePort range), so no
 * other test's `freePort` (port 0) can be given it between this check and its use; only a
 * process binding that fixed port could.
 */
export async function closedPort(): Promise<number> {
  const range = await readFile('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').catch(() => '32768 60999');
  const end = Math.min(Number(range.trim().split(/\s+/)[0]) || 32768, 30_000);
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = 10_000 + Math.floor(Math.random() * Math.max(1, end - 10_000));
    const server = createServer();
    const free = await listenOn(server, port).then(
      () => true,
      () => false,
    );
    if (free) {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      return port;
    }
  }
  throw new Error('could not find a closed port below the ephemeral range');
}
