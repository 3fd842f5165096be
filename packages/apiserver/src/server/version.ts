/** `/version`: the server reports Kubernetes 1.32, the release whose behaviour the spec describes. */
export function versionInfo(): Record<string, string> {
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
