import type { Container, ObjectMeta, PodSpec } from '@svc/api';
import type { Level, Version } from './policy.js';

/** One check's verdict on a pod: when forbidden, a short reason and the detail naming what to change. */
export interface CheckResult {
  allowed: boolean;
  reason?: string;
  detail?: string;
}

export type CheckPod = (meta: ObjectMeta, spec: PodSpec) => CheckResult;

/** A check's behaviour from one policy version on (until the next entry's version). */
export interface VersionedCheck {
  minimumVersion: Version;
  check: CheckPod;
  /** Baseline checks this restricted check replaces at its versions. */
  overrides?: readonly string[];
}

/** One control of the Pod Security Standards, at the level that introduces it. */
export interface Check {
  id: string;
  level: Exclude<Level, 'privileged'>;
  /** Strictly increasing minimum versions. */
  versions: readonly VersionedCheck[];
}

export const ALLOWED: CheckResult = { allowed: true };

export function forbidden(reason: string, detail: string): CheckResult {
  return { allowed: false, reason, detail };
}

/** `"a", "b"`: each item in double quotes as it is (Kubernetes' joinQuote). */
export function joinQuote(items: readonly string[]): string {
  return items.length === 0 ? '' : `"${items.join('", "')}"`;
}

export function pluralize(singular: string, plural: string, count: number): string {
  return count === 1 ? singular : plural;
}

/** `container "a"` or `containers "a", "b"`. */
export function containersPhrase(names: readonly string[]): string {
  return `${pluralize('container', 'containers', names.length)} ${joinQuote(names)}`;
}

/** The distinct values in byte order (Kubernetes' sets.String.List()). */
export function sortedSet(values: Iterable<string>): string[] {
  return [...new Set(values)].sort();
}

/** A Go `%q` of a string: JSON's quoting, which agrees with Go's for printable text. */
export function goQuote(s: string): string {
  return JSON.stringify(s);
}

/** Init containers, containers, then ephemeral containers: the order checks name them in. */
export function allContainers(spec: PodSpec): Container[] {
  return [...(spec.initContainers ?? []), ...(spec.containers ?? []), ...(spec.ephemeralContainers ?? [])];
}

export function isWindows(spec: PodSpec): boolean {
  return spec.os?.name === 'windows';
}
