import { fieldErrors, podSecurityLabelPrefix, type FieldError } from '@svc/api';

/** The Pod Security Standards levels, least strict first. */
export const LEVELS = ['privileged', 'baseline', 'restricted'] as const;
export type Level = (typeof LEVELS)[number];

/** A policy version: `latest` or `v1.<minor>`. */
export interface Version {
  readonly latest: boolean;
  readonly minor: number;
}

export const LATEST: Version = { latest: true, minor: 0 };

export function minorVersion(minor: number): Version {
  return { latest: false, minor };
}

export function versionString(v: Version): string {
  return v.latest ? 'latest' : `v1.${v.minor}`;
}

/** Whether `a` is older than `b`; `latest` is newer than every `v1.x`. */
export function olderThan(a: Version, b: Version): boolean {
  if (a.latest) return false;
  if (b.latest) return true;
  return a.minor < b.minor;
}

export interface LevelVersion {
  readonly level: Level;
  readonly version: Version;
}

/** `restricted:latest`, `baseline:v1.23`: how messages and audit annotations name a level and version. */
export function levelVersionString(lv: LevelVersion): string {
  return `${lv.level}:${versionString(lv.version)}`;
}

/** Equal, or both privileged (whatever their versions). */
export function equivalent(a: LevelVersion, b: LevelVersion): boolean {
  return (
    (a.level === 'privileged' && b.level === 'privileged') ||
    (a.level === b.level && versionString(a.version) === versionString(b.version))
  );
}

/** Negative when `a` is less strict than `b`, 0 when equal, positive when stricter. */
export function compareLevels(a: Level, b: Level): number {
  return LEVELS.indexOf(a) - LEVELS.indexOf(b);
}

export const LEVEL_ERROR = `must be one of ${LEVELS.join(', ')}`;
export const VERSION_ERROR = 'must be "latest" or "v1.x"';

/** A level, or undefined when `s` is not one. */
export function parseLevel(s: string): Level | undefined {
  return (LEVELS as readonly string[]).includes(s) ? (s as Level) : undefined;
}

/** A version, or undefined unless `s` is `latest` or `v1.<minor>` (no leading zeros). */
export function parseVersion(s: string): Version | undefined {
  if (s === 'latest') return LATEST;
  const m = /^v1\.(0|[1-9][0-9]*)$/.exec(s);
  if (!m?.[1]) return undefined;
  const minor = Number(m[1]);
  return Number.isSafeInteger(minor) ? minorVersion(minor) : undefined;
}

/** What a namespace enforces, audits and warns about. */
export interface Policy {
  readonly enforce: LevelVersion;
  readonly audit: LevelVersion;
  readonly warn: LevelVersion;
}

export type Mode = keyof Policy;
export const MODES: readonly Mode[] = ['enforce', 'audit', 'warn'];

export function fullyPrivileged(p: Policy): boolean {
  return MODES.every((m) => p[m].level === 'privileged');
}

export function equivalentPolicies(a: Policy, b: Policy): boolean {
  return MODES.every((m) => equivalent(a[m], b[m]));
}

/** The namespace label of a mode's level (pod-security.<domain>/enforce) or version (`.../enforce-version`). */
export function policyLabel(mode: Mode, what: 'level' | 'version'): string {
  return `${podSecurityLabelPrefix()}/${mode}${what === 'version' ? '-version' : ''}`;
}

/**
 * The policy a namespace's labels select over `defaults` (Kubernetes' PolicyToEvaluate): each
 * label present replaces its default; a bad enforce value falls back to restricted/latest, a
 * bad audit or warn level to privileged. Unless the warn level is labelled, an explicit
 * enforce level stricter than the warn level also becomes the warn level (and its version,
 * unless warn-version is labelled). The errors name each bad label.
 */
export function policyToEvaluate(
  labels: Readonly<Record<string, string>> | undefined,
  defaults: Policy,
): { policy: Policy; errors: FieldError[] } {
  const errors: FieldError[] = [];
  if (!labels || Object.keys(labels).length === 0) return { policy: defaults, errors };
  const out: Record<Mode, { level: Level; version: Version }> = {
    enforce: { ...defaults.enforce },
    audit: { ...defaults.audit },
    warn: { ...defaults.warn },
  };
  const bad = (label: string, value: string, why: string): void => {
    errors.push(fieldErrors.invalid(`metadata.labels[${label}]`, value, why));
  };
  let enforceLevelSet = false;
  for (const mode of MODES) {
    const levelLabel = policyLabel(mode, 'level');
    const level = labels[levelLabel];
    if (level !== undefined) {
      const parsed = parseLevel(level);
      if (parsed) out[mode].level = parsed;
      else {
        bad(levelLabel, level, LEVEL_ERROR);
        // Enforce fails closed; audit and warn fail open.
        out[mode].level = mode === 'enforce' ? 'restricted' : 'privileged';
      }
      if (mode === 'enforce') enforceLevelSet = parsed !== undefined;
    }
    const versionLabel = policyLabel(mode, 'version');
    const version = labels[versionLabel];
    if (version !== undefined) {
      const parsed = parseVersion(version);
      if (!parsed) bad(versionLabel, version, VERSION_ERROR);
      out[mode].version = parsed ?? LATEST;
    }
  }
  const warnLevelSet = labels[policyLabel('warn', 'level')] !== undefined;
  const warnVersionSet = labels[policyLabel('warn', 'version')] !== undefined;
  if (!warnLevelSet && enforceLevelSet && compareLevels(out.enforce.level, out.warn.level) > 0) {
    out.warn.level = out.enforce.level;
    if (!warnVersionSet) out.warn.version = out.enforce.version;
  }
  return { policy: out, errors };
}
