import { readFileSync } from 'node:fs';

/** Node's own default accept-queue length, used where the kernel's limit cannot be read. */
const NODE_DEFAULT_BACKLOG = 511;
/** The largest backlog Go passes to listen(2) (it caps somaxconn at 16 bits). */
const GO_MAX_BACKLOG = 65_535;

let cached: number | undefined;

/**
 * The accept-queue length a listener asks for: the kernel's `net.core.somaxconn`, as Go's
 * net package does for every Kubernetes component. Node's default of 511 overflows when a
 * few thousand clients connect at once (a flood, a restart behind a load balancer), and an
 * overflowing queue drops SYNs: the client retries after 1, 3, 7, 15… seconds, so a new
 * connection can wait minutes while the server is idle enough to take it.
 */
export function listenBacklog(): number {
  if (cached !== undefined) return cached;
  try {
    const n = Number(readFileSync('/proc/sys/net/core/somaxconn', 'utf8').trim());
    cached = Number.isInteger(n) && n > 0 ? Math.min(n, GO_MAX_BACKLOG) : NODE_DEFAULT_BACKLOG;
  } catch {
    cached = NODE_DEFAULT_BACKLOG;
  }
  return cached;
}
