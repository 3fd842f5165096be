/** The flags every command takes (kubectl's global flags), as commander hands them over. */
export interface GlobalFlags {
  svcconfig?: string;
  kubeconfig?: string;
  context?: string;
  namespace?: string;
  server?: string;
  token?: string;
  insecureSkipTlsVerify?: boolean;
  as?: string;
  asGroup?: string[];
  asUid?: string;
  requestTimeout?: string;
}

/** kubectl's `--request-timeout`: `0` (none), a plain number of seconds, or a Go-style duration (`1m`, `500ms`). */
export function parseRequestTimeout(v: string | undefined): number | undefined {
  if (v === undefined || v === '' || v === '0') return undefined;
  if (/^\d+$/.test(v)) return Number(v) * 1000;
  const units: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
  let total = 0;
  const re = /(\d+(?:\.\d+)?)(ms|s|m|h)/gy;
  let m: RegExpExecArray | null;
  let at = 0;
  while ((m = re.exec(v)) !== null) {
    total += Number(m[1]) * (units[m[2] ?? 's'] ?? 1000);
    at = re.lastIndex;
  }
  if (at !== v.length || at === 0) {
    throw new Error(
      `Invalid timeout value. Timeout must be a single integer in seconds, or an integer followed by a corresponding time unit (e.g. 1s | 2m | 3h)`,
    );
  }
  return total;
}
