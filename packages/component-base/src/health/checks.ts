/** One named health check; resolves when healthy, throws with the reason otherwise. */
export interface HealthCheck {
  name: string;
  check(): Promise<void>;
}

/** A post-start hook's check: failing until `done()` is called. */
export class PostStartHook implements HealthCheck {
  readonly name: string;
  private finished = false;
  constructor(hookName: string) {
    this.name = `poststarthook/${hookName}`;
  }
  done(): void {
    this.finished = true;
  }
  get isDone(): boolean {
    return this.finished;
  }
  async check(): Promise<void> {
    if (!this.finished) throw new Error('not finished');
  }
}

export const pingCheck: HealthCheck = { name: 'ping', check: async () => undefined };
/** Kubernetes' `log` check: healthy while the logger can flush; ours writes synchronously. */
export const logCheck: HealthCheck = { name: 'log', check: async () => undefined };

export function storeCheck(name: string, probe: () => Promise<void>): HealthCheck {
  return { name, check: probe };
}

/** Passes while the server is not shutting down (readyz). */
export class ShutdownCheck implements HealthCheck {
  readonly name = 'shutdown';
  private shuttingDown = false;
  begin(): void {
    this.shuttingDown = true;
  }
  async check(): Promise<void> {
    if (this.shuttingDown) throw new Error('process is shutting down');
  }
}

/** Wraps a check so it passes during the livez grace period after start (for post-start hooks). */
export function withGracePeriod(c: HealthCheck, startedAt: number, graceMs: number): HealthCheck {
  return {
    name: c.name,
    check: async () => {
      if (Date.now() - startedAt < graceMs) return;
      await c.check();
    },
  };
}
