/** svcctl's own version: the Kubernetes release whose client it follows, and the product's. */
export function clientVersionInfo(): Record<string, string> {
  return {
    major: '1',
    minor: '32',
    gitVersion: 'v1.32.0-svc.0.1.0',
    gitCommit: process.env.SVC_GIT_COMMIT ?? 'unknown',
    gitTreeState: 'clean',
    buildDate: '2026-11-21T00:00:00Z',
    goVersion: `node${process.versions.node}`,
    compiler: 'tsc',
    platform: `${process.platform}/${process.arch === 'x64' ? 'amd64' : process.arch}`,
  };
}

/** `User-Agent` of every request: `svcctl/v1.32.0-svc.0.1.0 (linux/amd64)`; the server derives field managers from it. */
export function userAgent(cli: string): string {
  const v = clientVersionInfo();
  return `${cli}/${v.gitVersion} (${v.platform})`;
}
