import { API_SERVER_GATES, FeatureGates, parseGoBool, type FeatureSpec } from '@svc/machinery';

/**
 * The svclet's gates: the API server's table with the stages the spec gives for the node agent
 * (Versioning 3: ConsistentListFromCache and RetryGenerateName alpha), plus Kubernetes'
 * LoggingBetaOptions, which gates `--logging-format=json`.
 */
export const SVCLET_GATES: readonly FeatureSpec[] = [
  ...API_SERVER_GATES.map((g): FeatureSpec =>
    g.name === 'ConsistentListFromCache' || g.name === 'RetryGenerateName'
      ? { ...g, stage: 'ALPHA', default: false }
      : g,
  ),
  { name: 'LoggingBetaOptions', stage: 'BETA', default: true },
];

/**
 * `--feature-gates` of the node agent: plain `Key=true|false` pairs (no `<component>:` prefix),
 * comma separated; throws naming the first bad entry.
 */
export function parseGatePairs(value: string): Record<string, boolean> {
  const out: Record<string, boolean> = {};
  for (const entry of value.split(',')) {
    if (entry.trim() === '') continue;
    const eq = entry.indexOf('=');
    const key = (eq < 0 ? entry : entry.slice(0, eq)).trim();
    if (eq < 0) throw new Error(`missing bool value for ${key}`);
    const raw = entry.slice(eq + 1).trim();
    try {
      out[key] = parseGoBool(raw);
    } catch (e) {
      throw new Error(`invalid value of ${key}=${raw}, err: ${(e as Error).message}`, { cause: e });
    }
  }
  return out;
}

/** The svclet's gates set from the merged `featureGates` map; throws for unknown or locked gates. */
export function svcletFeatureGates(values: Readonly<Record<string, boolean>>): FeatureGates {
  const gates = new FeatureGates(SVCLET_GATES);
  for (const [k, v] of Object.entries(values)) gates.set(k, v);
  return gates;
}
