import cluster, { type Worker } from 'node:cluster';

/**
 * `--workers N` above 1: this process only supervises N server processes (node:cluster), which
 * run with the same arguments and share `--secure-port` (the kernel's listening socket, with
 * connections handed out by this process in turn). Each is a whole API server, as several
 * servers behind one address are: its own etcd clients and watch cache, post-start hooks,
 * priority-and-fairness seats and `/metrics`.
 *
 * The first worker starts alone and the others once it listens, so that the first makes what
 * they all read from `--cert-dir` (the self-signed serving certificate, the service-account
 * key) and writes the bootstrap objects while the others find them there. SIGTERM or SIGINT
 * stop every worker and exit 0 once all have stopped cleanly; a worker that exits on its own
 * stops the others and this process exits with its code (a supervisor restarts the whole).
 */
export function superviseWorkers(n: number): void {
  const workers = new Set<Worker>();
  let stopping = false;
  let code = 0;

  const stopAll = (): void => {
    for (const w of workers) w.process.kill('SIGTERM');
  };
  const fork = (): Worker => {
    const w = cluster.fork();
    workers.add(w);
    w.once('exit', (exitCode, signal) => {
      workers.delete(w);
      if (!stopping) {
        stopping = true;
        code = exitCode || 1;
        process.stderr.write(
          `svc-apiserver worker ${w.process.pid ?? '?'} exited (${signal ?? `code ${exitCode}`}); stopping the others\n`,
        );
        stopAll();
      } else if (exitCode !== 0 && signal !== 'SIGTERM' && signal !== 'SIGINT' && code === 0) {
        // Stopping: a worker still starting (no handlers yet) ends by the signal itself, the
        // supervisor's SIGTERM or the terminal's SIGINT, which is no failure.
        code = exitCode || 1;
      }
      if (workers.size === 0) process.exit(code);
    });
    return w;
  };

  fork().once('listening', () => {
    if (stopping) return;
    for (let i = 1; i < n; i++) fork();
  });
  let signals = 0;
  const onSignal = (sig: string): void => {
    signals++;
    if (signals > 1) {
      // A second signal: no more waiting for the workers to drain.
      for (const w of workers) w.process.kill('SIGKILL');
      process.exit(1);
    }
    if (stopping) return;
    stopping = true;
    process.stderr.write(`received ${sig}, stopping ${workers.size} workers\n`);
    stopAll();
  };
  process.on('SIGTERM', () => onSignal('SIGTERM'));
  process.on('SIGINT', () => onSignal('SIGINT'));
}

/** True in a worker of `--workers` (it leaves SIGINT to the supervisor). */
export function isWorker(): boolean {
  return cluster.isWorker;
}

/** True in the supervising process of `--workers` above 1 (a worker, or a lone server, is not). */
export function supervises(workers: number): boolean {
  return workers > 1 && cluster.isPrimary;
}
