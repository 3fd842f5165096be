const PATTERN = /^v(\d+)(?:(alpha|beta)(\d+))?$/;

/**
 * Kubernetes' version priority (CompareKubeAwareVersionStrings): GA before beta before alpha,
 * then the higher major, then the higher minor; strings of another shape come last, in
 * alphabetical order. Positive when `a` ranks above `b`.
 */
export function compareKubeVersions(a: string, b: string): number {
  const ma = PATTERN.exec(a);
  const mb = PATTERN.exec(b);
  if (!ma || !mb) {
    if (ma) return 1;
    if (mb) return -1;
    return a < b ? 1 : a > b ? -1 : 0;
  }
  const stage = (m: RegExpExecArray): number => (m[2] === undefined ? 2 : m[2] === 'beta' ? 1 : 0);
  if (stage(ma) !== stage(mb)) return stage(ma) - stage(mb);
  if (Number(ma[1]) !== Number(mb[1])) return Number(ma[1]) - Number(mb[1]);
  return Number(ma[3] ?? 0) - Number(mb[3] ?? 0);
}

/** Highest priority first (discovery's order of a group's versions). */
export function byKubeVersionPriority(versions: readonly string[]): string[] {
  return [...versions].sort((x, y) => compareKubeVersions(y, x));
}
