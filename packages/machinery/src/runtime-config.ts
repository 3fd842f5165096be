/**
 * `--runtime-config`: which group-versions and single resources are served. Whether a named
 * group-version exists is checked by the caller; this module only parses and answers.
 */
import { parseGoBool } from './go-flags.js';

export type StabilitySelector = 'all' | 'ga' | 'beta' | 'alpha';

export interface RuntimeConfig {
  /** `api/all`, `api/ga`, `api/beta`, `api/alpha`. */
  stages: Map<StabilitySelector, boolean>;
  /** Keyed by `groupVersionKey` (`apps/v1`; core is `v1`). */
  groupVersions: Map<string, boolean>;
  /** Keyed by `resourceKey` (`apps/v1/deployments`; core is `v1/pods`). */
  resources: Map<string, boolean>;
}

export function groupVersionKey(group: string, version: string): string {
  return group === '' ? version : `${group}/${version}`;
}

export function resourceKey(group: string, version: string, resource: string): string {
  return `${groupVersionKey(group, version)}/${resource}`;
}

const STAGE_KEYS: Record<string, StabilitySelector> = {
  'api/all': 'all',
  'api/ga': 'ga',
  'api/beta': 'beta',
  'api/alpha': 'alpha',
};
const CORE_VERSION = /^v[0-9]+((alpha|beta)[0-9]+)?$/;

/**
 * Parses one or more flag values of `key[=value],...`. A missing or empty value means true.
 * Keys: `api/all|ga|beta|alpha`, `<group>/<version>`, `<group>/<version>/<resource>`, and a
 * bare core version (`v1`, also `/v1`). A core resource is `v1/<resource>` (or `/v1/<resource>`):
 * a two-part key whose first part looks like a version is read that way, not as a group named
 * `v1`. Later entries win. Throws an Error naming the bad entry.
 */
export function parseRuntimeConfig(flagValues: string | readonly string[]): RuntimeConfig {
  const rc: RuntimeConfig = { stages: new Map(), groupVersions: new Map(), resources: new Map() };
  const values = typeof flagValues === 'string' ? [flagValues] : flagValues;
  for (const flagValue of values) {
    for (const raw of flagValue.split(',')) {
      const entry = raw.trim();
      if (entry === '') continue;
      const eq = entry.indexOf('=');
      const key = (eq < 0 ? entry : entry.slice(0, eq)).trim();
      const text = eq < 0 ? '' : entry.slice(eq + 1).trim();
      const bad = (why: string): Error => new Error(`invalid key ${JSON.stringify(key)}: ${why}`);
      if (key === '') throw new Error(`invalid entry ${JSON.stringify(entry)}: the key is empty`);
      let enabled = true;
      if (text !== '') {
        try {
          enabled = parseGoBool(text);
        } catch (e) {
          throw new Error(`invalid value of ${key}: ${text}, err: ${(e as Error).message}`, { cause: e });
        }
      }
      const stage = Object.hasOwn(STAGE_KEYS, key) ? STAGE_KEYS[key] : undefined;
      if (stage) {
        rc.stages.set(stage, enabled);
        continue;
      }
      const parts = key.split('/');
      if (parts.length === 1) {
        if (!CORE_VERSION.test(key))
          throw bad('expected <group>/<version>[/<resource>], a core version such as v1, or api/<all|ga|beta|alpha>');
        rc.groupVersions.set(key, enabled);
        continue;
      }
      if (parts.length > 3) throw bad('too many slashes; expected <group>/<version> or <group>/<version>/<resource>');
      const coreResource = parts.length === 2 && CORE_VERSION.test(parts[0] ?? '');
      const [group = '', version = '', resource] = coreResource ? ['', ...parts] : parts;
      if (version === '') throw bad('the version is empty');
      if (resource === undefined) {
        rc.groupVersions.set(groupVersionKey(group, version), enabled);
        continue;
      }
      if (resource === '') throw bad('the resource is empty');
      if (resource.toLowerCase() !== resource) {
        throw bad(`group/version/resource and resource is always lowercase plural, not ${JSON.stringify(resource)}`);
      }
      rc.resources.set(resourceKey(group, version, resource), enabled);
    }
  }
  return rc;
}

function stageOf(version: string): 'ga' | 'beta' | 'alpha' | undefined {
  if (/^v[0-9]+$/.test(version)) return 'ga';
  if (/^v[0-9]+beta[0-9]+$/.test(version)) return 'beta';
  if (/^v[0-9]+alpha[0-9]+$/.test(version)) return 'alpha';
  return undefined;
}

/** A group-version, or one resource of it, whose serving `isEnabled` decides. */
export interface EnablementQuery {
  group: string;
  version: string;
  /** Absent: the group-version as a whole. */
  resource?: string | undefined;
  /** The built-in default for this resource or group-version. */
  defaultEnabled: boolean;
}

/**
 * Whether `group/version` (or one `resource` of it) is served. Most specific wins, as
 * Kubernetes' MergeAPIResourceConfigs: a resource entry, then the group-version entry, then
 * the stage selectors (`api/all`, overridden by `api/ga|beta|alpha` for versions of that
 * stage), then `defaultEnabled`, the built-in default for this resource or group-version.
 */
export function isEnabled(rc: RuntimeConfig, query: EnablementQuery): boolean {
  const { group, version, resource, defaultEnabled } = query;
  if (resource !== undefined) {
    const r = rc.resources.get(resourceKey(group, version, resource));
    if (r !== undefined) return r;
  }
  const gv = rc.groupVersions.get(groupVersionKey(group, version));
  if (gv !== undefined) return gv;
  const stage = stageOf(version);
  const byStage = stage === undefined ? undefined : rc.stages.get(stage);
  if (byStage !== undefined) return byStage;
  return rc.stages.get('all') ?? defaultEnabled;
}
