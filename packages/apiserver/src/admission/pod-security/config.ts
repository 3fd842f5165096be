import { fieldErrorMessage, fieldErrors, group, groupSpellings, type FieldError } from '@svc/api';
import { isDns1123Label, isDns1123Subdomain } from '@svc/machinery';
import { ConfigurationError } from '../../options.js';
import {
  LATEST,
  LEVEL_ERROR,
  VERSION_ERROR,
  parseLevel,
  parseVersion,
  type LevelVersion,
  type Mode,
  type Policy,
} from './policy.js';

/** PodSecurity's configuration: the policy of unlabelled namespaces and who or what is exempt. */
export interface PodSecurityConfig {
  defaults: Policy;
  exemptions: { usernames: string[]; namespaces: string[]; runtimeClasses: string[] };
}

/** Kubernetes' defaults when there is no configuration: everything privileged, nothing exempt. */
export const DEFAULT_POD_SECURITY_CONFIG: PodSecurityConfig = {
  defaults: {
    enforce: { level: 'privileged', version: LATEST },
    audit: { level: 'privileged', version: LATEST },
    warn: { level: 'privileged', version: LATEST },
  },
  exemptions: { usernames: [], namespaces: [], runtimeClasses: [] },
};

/** The API versions a PodSecurityConfiguration may be written in (Kubernetes reads all three alike). */
export function podSecurityConfigVersions(): string[] {
  return groupSpellings(group('pod-security.admission.config')).flatMap((g) =>
    ['v1', 'v1beta1', 'v1alpha1'].map((v) => `${g}/${v}`),
  );
}

/**
 * Reads PodSecurity's entry of `--admission-control-config-file` (Kubernetes'
 * PodSecurityConfiguration, `pod-security.admission.config.<suffix>/v1`). Unset defaults are
 * `privileged` and `latest`. Anything wrong is a `ConfigurationError` naming every bad field.
 */
export function parsePodSecurityConfig(raw: unknown): PodSecurityConfig {
  if (raw === undefined || raw === null) return DEFAULT_POD_SECURITY_CONFIG;
  const fail = (why: string): never => {
    throw new ConfigurationError(`--admission-control-config-file: PodSecurity: ${why}`);
  };
  if (typeof raw !== 'object' || Array.isArray(raw)) return fail('configuration must be an object');
  const doc = raw as Record<string, unknown>;
  const versions = podSecurityConfigVersions();
  if (
    doc.kind !== 'PodSecurityConfiguration' ||
    typeof doc.apiVersion !== 'string' ||
    !versions.includes(doc.apiVersion)
  ) {
    return fail(
      `expected kind PodSecurityConfiguration in ${versions.join(', ')}, got ${String(doc.kind)} in ${String(doc.apiVersion)}`,
    );
  }
  const errs: FieldError[] = [];
  const defaults = objectField(doc, 'defaults', errs);
  const exemptions = objectField(doc, 'exemptions', errs);
  const mode = (m: Mode): LevelVersion => {
    const level = defaultsField(defaults, m, errs) || 'privileged';
    const version = defaultsField(defaults, `${m}-version`, errs) || 'latest';
    const l = parseLevel(level);
    const v = parseVersion(version);
    if (!l) errs.push(fieldErrors.invalid(`defaults.${m}`, level, LEVEL_ERROR));
    if (!v) errs.push(fieldErrors.invalid(`defaults.${m}-version`, version, VERSION_ERROR));
    return { level: l ?? 'privileged', version: v ?? LATEST };
  };
  // Kubernetes' validation order: enforce, warn, audit.
  const enforce = mode('enforce');
  const warn = mode('warn');
  const audit = mode('audit');
  const list = (key: string, check: (s: string) => string[]): string[] => {
    const path = `exemptions.${key}`;
    const value = exemptions[key];
    if (value === undefined || value === null) return [];
    if (!Array.isArray(value)) {
      errs.push(fieldErrors.typeInvalid(path, value, 'must be a list of strings'));
      return [];
    }
    const seen = new Set<string>();
    value.forEach((item: unknown, i) => {
      const at = `${path}[${i}]`;
      if (typeof item !== 'string') return errs.push(fieldErrors.typeInvalid(at, item, 'must be a string'));
      const why = check(item);
      if (why.length > 0) return errs.push(fieldErrors.invalid(at, item, why.join(', ')));
      if (seen.has(item)) return errs.push(fieldErrors.duplicate(at, item));
      seen.add(item);
      return undefined;
    });
    return [...seen];
  };
  const namespaces = list('namespaces', isDns1123Label);
  const runtimeClasses = list('runtimeClasses', isDns1123Subdomain);
  const usernames = list('usernames', (s) => (s === '' ? ['username must not be empty'] : []));
  if (errs.length > 0) return fail(errs.map(fieldErrorMessage).join(', '));
  return {
    defaults: { enforce, audit, warn },
    exemptions: { usernames, namespaces, runtimeClasses },
  };
}

function objectField(doc: Record<string, unknown>, key: string, errs: FieldError[]): Record<string, unknown> {
  const v = doc[key];
  if (v === undefined || v === null) return {};
  if (typeof v !== 'object' || Array.isArray(v)) {
    errs.push(fieldErrors.typeInvalid(key, v, 'must be an object'));
    return {};
  }
  return v as Record<string, unknown>;
}

/** A string of `defaults`; '' when unset. */
function defaultsField(o: Record<string, unknown>, key: string, errs: FieldError[]): string {
  const v = o[key];
  const path = `defaults.${key}`;
  if (v === undefined || v === null) return '';
  if (typeof v !== 'string') {
    errs.push(fieldErrors.typeInvalid(path, v, 'must be a string'));
    return '';
  }
  return v;
}
