import {
  type FeatureGates,
  componentFeatureGates,
  featuresAt,
  BINARY_VERSION,
  parseGoBool,
  SVC_FEATURE_GATES,
} from '@svc/machinery';
import type { FeatureSpec } from '@svc/machinery';

/**
 * The spec gives the node agent other stages for two gates (Versioning 3: ConsistentListFromCache
 * and RetryGenerateName alpha, off); every other gate is Kubernetes 1.32's, as the API server has them.
 */
function svcletAdjust(specs: FeatureSpec[]): FeatureSpec[] {
  return specs.map((g): FeatureSpec =>
    g.name === 'ConsistentListFromCache' || g.name === 'RetryGenerateName'
      ? { ...g, stage: 'ALPHA', default: false }
      : g,
  );
}

/** The svclet's gates: Kubernetes 1.32's whole table with the node agent's stages from the spec. */
export const SVCLET_GATES: readonly FeatureSpec[] = svcletAdjust(featuresAt(SVC_FEATURE_GATES, BINARY_VERSION));

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

/**
 * The svclet's gates set from the merged `featureGates` map; throws for unknown or locked gates.
 * Setting a GA or deprecated gate leaves a line in `warnings`.
 */
export function svcletFeatureGates(values: Readonly<Record<string, boolean>>): FeatureGates {
  const gates = componentFeatureGates({ adjust: svcletAdjust });
  for (const [k, v] of Object.entries(values)) gates.set(k, v);
  return gates;
}
