/**
 * Feature gates (k8s.io/component-base `featuregate`): a fixed table of known gates, set from
 * `--feature-gates` values. Messages follow Kubernetes.
 */
import { parseGoBool } from './go-flags.js';

export type FeatureStage = 'ALPHA' | 'BETA' | 'GA' | 'DEPRECATED';

export interface FeatureSpec {
  name: string;
  stage: FeatureStage;
  default: boolean;
  /** The gate cannot be set to anything but its default. GA gates behave as locked too. */
  lockToDefault?: boolean;
}

const ALL_ALPHA = 'AllAlpha';
const ALL_BETA = 'AllBeta';

const SPECIAL_GATES: readonly FeatureSpec[] = [
  { name: ALL_ALPHA, stage: 'ALPHA', default: false },
  { name: ALL_BETA, stage: 'BETA', default: false },
];

export interface FeatureGatesOptions {
  /** Entries prefixed `<component>:` apply only when they name this component (an empty prefix names it); default `svc`. */
  component?: string;
}

/**
 * The state of every known gate. An explicitly set gate wins; otherwise `AllAlpha` / `AllBeta`
 * (when set) decide for unlocked gates of their stage; otherwise the default. `parse` is
 * atomic: on error nothing changes.
 */
export class FeatureGates {
  private readonly specs = new Map<string, FeatureSpec>();
  private readonly values = new Map<string, boolean>();
  private readonly component: string;

  constructor(specs: readonly FeatureSpec[], opts: FeatureGatesOptions = {}) {
    this.component = opts.component ?? 'svc';
    for (const s of [...SPECIAL_GATES, ...specs]) {
      if (this.specs.has(s.name)) throw new Error(`feature gate ${s.name} is registered twice`);
      this.specs.set(s.name, s);
    }
  }

  /**
   * Applies `--feature-gates` values (the flag may repeat): `Key=true,svc:Other=false`. Later
   * entries win. Throws an Error naming the first bad entry.
   */
  parse(flagValues: readonly string[]): void {
    const pending = new Map<string, boolean>();
    for (const flagValue of flagValues) {
      for (const entry of flagValue.split(',')) {
        if (entry.trim() === '') continue;
        const colon = entry.indexOf(':');
        const component = (colon < 0 ? '' : entry.slice(0, colon).trim()) || this.component;
        if (component !== this.component) continue;
        const pair = colon < 0 ? entry : entry.slice(colon + 1);
        const eq = pair.indexOf('=');
        const key = (eq < 0 ? pair : pair.slice(0, eq)).trim();
        if (eq < 0) throw new Error(`missing bool value for ${key}`);
        const raw = pair.slice(eq + 1).trim();
        let value: boolean;
        try {
          value = parseGoBool(raw);
        } catch (e) {
          throw new Error(`invalid value of ${key}=${raw}, err: ${(e as Error).message}`, { cause: e });
        }
        pending.set(key, value);
      }
    }
    for (const [key, value] of pending) this.check(key, value);
    for (const [key, value] of pending) this.values.set(key, value);
  }

  /** Sets one gate as if given on the command line. */
  set(name: string, value: boolean): void {
    this.check(name, value);
    this.values.set(name, value);
  }

  private check(name: string, value: boolean): void {
    const spec = this.specs.get(name);
    if (!spec) throw new Error(`unrecognized feature gate: ${name}`);
    if ((spec.lockToDefault || spec.stage === 'GA') && value !== spec.default) {
      throw new Error(`cannot set feature gate ${name} to ${value}, feature is locked to ${spec.default}`);
    }
  }

  /** Throws for a gate that is not in the table (a programming error). */
  enabled(name: string): boolean {
    const spec = this.specs.get(name);
    if (!spec) throw new Error(`feature ${JSON.stringify(name)} is not registered in FeatureGate`);
    const explicit = this.values.get(name);
    if (explicit !== undefined) return explicit;
    if (!spec.lockToDefault && spec.stage !== 'GA') {
      const all =
        spec.stage === 'ALPHA'
          ? this.values.get(ALL_ALPHA)
          : spec.stage === 'BETA'
            ? this.values.get(ALL_BETA)
            : undefined;
      if (all !== undefined && name !== ALL_ALPHA && name !== ALL_BETA) return all;
    }
    return spec.default;
  }

  /** Kubernetes' KnownFeatures: `Name=true|false (STAGE - default=x)`, sorted; GA and deprecated gates omitted. */
  known(): string[] {
    return [...this.specs.values()]
      .filter((s) => s.stage !== 'GA' && s.stage !== 'DEPRECATED')
      .map((s) => `${s.name}=true|false (${s.stage} - default=${s.default})`)
      .sort();
  }

  /** Every gate's current value, by name, sorted (for logging the effective configuration). */
  snapshot(): Record<string, boolean> {
    const out: Record<string, boolean> = {};
    for (const name of [...this.specs.keys()].sort()) out[name] = this.enabled(name);
    return out;
  }
}

/** The API server's gates: the spec's table (Versioning, item 3). */
export const API_SERVER_GATES: readonly FeatureSpec[] = [
  { name: 'APIResponseCompression', stage: 'BETA', default: true },
  { name: 'APIServerIdentity', stage: 'BETA', default: true },
  { name: 'APIServerTracing', stage: 'BETA', default: true },
  { name: 'AnonymousAuthConfigurableEndpoints', stage: 'ALPHA', default: false },
  { name: 'AuthorizeWithSelectors', stage: 'ALPHA', default: false },
  { name: 'AuthorizeNodeWithSelectors', stage: 'ALPHA', default: false },
  { name: 'ComponentSLIs', stage: 'BETA', default: true },
  { name: 'ConsistentListFromCache', stage: 'BETA', default: true },
  { name: 'CRDValidationRatcheting', stage: 'BETA', default: true },
  { name: 'CustomResourceFieldSelectors', stage: 'BETA', default: true },
  { name: 'MutatingAdmissionPolicy', stage: 'ALPHA', default: false },
  { name: 'ResilientWatchCacheInitialization', stage: 'BETA', default: true },
  { name: 'RetryGenerateName', stage: 'BETA', default: true },
  { name: 'SeparateCacheWatchRPC', stage: 'BETA', default: true },
  { name: 'StorageVersionAPI', stage: 'ALPHA', default: false },
  { name: 'StorageVersionHash', stage: 'BETA', default: true },
  { name: 'StructuredAuthenticationConfiguration', stage: 'BETA', default: true },
  { name: 'StructuredAuthorizationConfiguration', stage: 'BETA', default: true },
  { name: 'UnknownVersionInteroperabilityProxy', stage: 'ALPHA', default: false },
  { name: 'WatchFromStorageWithoutResourceVersion', stage: 'BETA', default: false },
  { name: 'WatchList', stage: 'ALPHA', default: false },
  { name: 'WatchListClient', stage: 'BETA', default: false },
];
