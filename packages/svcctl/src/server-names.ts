import { naming, useNaming, type NamingScheme } from '@svc/api/names';

/**
 * Runs `f` with names.ts answering in the server's naming (`deploymentAnnotation()`,
 * `podTemplateHashLabel()`...), then restores the process's naming. Synchronous, so nothing
 * else in the process sees the switch.
 */
export function inNaming<T>(scheme: NamingScheme, f: () => T): T {
  const previous = naming().scheme;
  useNaming(scheme);
  try {
    return f();
  } finally {
    useNaming(previous);
  }
}
