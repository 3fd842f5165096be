import { NAMINGS, type NamingScheme } from '@svc/api/names';

/**
 * Annotations the command-line client itself reads and writes share the prefix of its
 * last-applied annotation (svcctl's domain, or kubectl's under `--naming=kubernetes`):
 * `restartedAt` (rollout restart), `default-container` (logs).
 */
export function cliAnnotation(naming: NamingScheme, name: 'restartedAt' | 'default-container'): string {
  const last = NAMINGS[naming].lastAppliedAnnotation;
  return `${last.slice(0, last.indexOf('/'))}/${name}`;
}
