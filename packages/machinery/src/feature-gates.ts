/**
 * Feature gates (k8s.io/component-base `featuregate`): a fixed table of known gates, set from
 * `--feature-gates` values. Messages follow Kubernetes.
 */
import { parseGoBool } from './go-flags.js';
import { SVC_FEATURE_GATES, type VersionedFeature } from './feature-gate-table.js';

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
  /**
   * Other components whose entries this binary accepts and leaves alone; an entry naming any
   * other component is refused (`component not registered`), as Kubernetes' registry does.
   */
  otherComponents?: readonly string[];
  /** The emulated version the table was resolved at, for messages about gates not yet there. */
  emulatedVersion?: string;
  /** Gates that exist in later releases than the emulated one (refused with a message naming it). */
  laterGates?: readonly string[];
}

function versionParts(v: string): [number, number] {
  const [major = 0, minor = 0] = v.split('.').map(Number);
  return [major, minor];
}

/** Whether `a` is at or before `b` (`major.minor`). */
function atOrBefore(a: string, b: string): boolean {
  const [am, an] = versionParts(a);
  const [bm, bn] = versionParts(b);
  return am < bm || (am === bm && an <= bn);
}

/**
 * The gates as they stood at `version` (Kubernetes' versioned specs: the last change at or
 * before it). Gates introduced later are left out.
 */
export function featuresAt(table: readonly VersionedFeature[], version: string): FeatureSpec[] {
  const out: FeatureSpec[] = [];
  for (const f of table) {
    const spec = [...f.specs].reverse().find((s) => atOrBefore(s.version, version));
    if (!spec) continue;
    out.push({
      name: f.name,
      stage: spec.stage,
      default: spec.default,
      ...(spec.lockToDefault ? { lockToDefault: true } : {}),
    });
  }
  return out;
}

/** Names of the gates of `table` that do not exist yet at `version`. */
export function featuresAfter(table: readonly VersionedFeature[], version: string): string[] {
  return table.filter((f) => !f.specs.some((s) => atOrBefore(s.version, version))).map((f) => f.name);
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
  private readonly others: ReadonlySet<string>;
  private readonly later: ReadonlySet<string>;
  private readonly emulatedVersion?: string;
  private readonly warned = new Set<string>();
  /** Warnings for GA and deprecated gates that were set, once per gate, in the order set. */
  readonly warnings: string[] = [];

  constructor(specs: readonly FeatureSpec[], opts: FeatureGatesOptions = {}) {
    this.component = opts.component ?? 'svc';
    this.others = new Set(opts.otherComponents ?? []);
    this.later = new Set(opts.laterGates ?? []);
    this.emulatedVersion = opts.emulatedVersion;
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
        if (component !== this.component) {
          if (this.others.has(component)) continue;
          throw new Error(`component not registered: ${component}`);
        }
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
    for (const [key, value] of pending) this.store(key, value);
  }

  /** Sets one gate as if given on the command line. */
  set(name: string, value: boolean): void {
    this.check(name, value);
    this.store(name, value);
  }

  private store(name: string, value: boolean): void {
    this.values.set(name, value);
    const stage = this.specs.get(name)?.stage;
    if ((stage === 'GA' || stage === 'DEPRECATED') && !this.warned.has(name)) {
      this.warned.add(name);
      this.warnings.push(
        `Setting ${stage === 'GA' ? 'GA' : 'deprecated'} feature gate ${name}=${value}. It will be removed in a future release.`,
      );
    }
  }

  private check(name: string, value: boolean): void {
    const spec = this.specs.get(name);
    if (!spec && this.later.has(name) && this.emulatedVersion !== undefined)
      throw new Error(`feature gate ${name} does not exist at emulated version ${this.emulatedVersion}`);
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

  /** The stage of a registered gate (undefined for an unknown name). */
  stage(name: string): FeatureStage | undefined {
    return this.specs.get(name)?.stage;
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

/** The release whose behaviour our binaries have (the spec's: 1.32). */
export const BINARY_VERSION = '1.32';
/** What `--emulated-version` accepts (the spec: 1.31 only). */
export const EMULATABLE_VERSIONS: readonly string[] = ['1.31'];

/**
 * `--emulated-version` values (repeatable, comma lists of `<component>=<major>.<minor>`; a bare
 * version names `component`). Returns the version this component emulates, or undefined when
 * not set. Throws naming the bad entry.
 */
export function parseEmulatedVersion(values: readonly string[], component = 'svc'): string | undefined {
  let out: string | undefined;
  for (const value of values) {
    for (const entry of value.split(',')) {
      if (entry.trim() === '') continue;
      const eq = entry.indexOf('=');
      const name = eq < 0 ? component : entry.slice(0, eq).trim();
      const version = (eq < 0 ? entry : entry.slice(eq + 1)).trim();
      if (name !== component) throw new Error(`component not registered: ${name}`);
      if (!/^\d+\.\d+$/.test(version))
        throw new Error(
          `${entry.trim()}: the version must be <major>.<minor>, e.g. ${component}=${EMULATABLE_VERSIONS[0]}`,
        );
      if (!EMULATABLE_VERSIONS.includes(version))
        throw new Error(
          `${entry.trim()}: emulation version ${version} is not between [${EMULATABLE_VERSIONS.join(', ')}] (this binary is ${BINARY_VERSION})`,
        );
      out = version;
    }
  }
  return out;
}

export interface ComponentFeatureGatesOptions {
  /** The emulated `major.minor`; the binary's version when unset. */
  emulatedVersion?: string;
  component?: string;
  otherComponents?: readonly string[];
  /** A component's own changes to the resolved table (the spec gives the node agent other stages). */
  adjust?: (specs: FeatureSpec[]) => FeatureSpec[];
}

/** Every gate of Kubernetes 1.32's table as it stood at the (emulated) version, ready to parse flags into. */
export function componentFeatureGates(opts: ComponentFeatureGatesOptions = {}): FeatureGates {
  const version = opts.emulatedVersion ?? BINARY_VERSION;
  const resolved = featuresAt(SVC_FEATURE_GATES, version);
  return new FeatureGates(opts.adjust ? opts.adjust(resolved) : resolved, {
    component: opts.component,
    otherComponents: opts.otherComponents,
    emulatedVersion: opts.emulatedVersion,
    laterGates: featuresAfter(SVC_FEATURE_GATES, version),
  });
}
