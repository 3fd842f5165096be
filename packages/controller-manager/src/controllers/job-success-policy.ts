import type { SuccessPolicy } from '@svc/api';
import { parseIndexes } from './job-util.js';

/**
 * Kubernetes' matchSuccessPolicy (1.32, SuccessPolicy beta): the first rule the succeeded indexes
 * satisfy. A rule with `succeededIndexes` is met when all of those indexes succeeded, or (with
 * `succeededCount`) when at least that many of them did; a rule with only `succeededCount` when
 * that many indexes succeeded at all. A rule whose index list yields no index is skipped. Answers
 * the condition message (`Matched rules at index N`), or undefined when no rule is met.
 */
export function matchSuccessPolicy(
  policy: SuccessPolicy | undefined,
  { completions, succeeded }: { completions: number; succeeded: ReadonlySet<number> },
): string | undefined {
  if (!policy || succeeded.size === 0) return undefined;
  for (const [i, rule] of policy.rules.entries()) {
    const count = rule.succeededCount;
    if (rule.succeededIndexes !== undefined) {
      const required = parseIndexes(rule.succeededIndexes, completions);
      if (required.size === 0) continue;
      let contained = 0;
      for (const index of required) if (succeeded.has(index)) contained++;
      if (contained === required.size || (count !== undefined && contained >= count))
        return `Matched rules at index ${i}`;
    } else if (count !== undefined && succeeded.size >= count) {
      return `Matched rules at index ${i}`;
    }
  }
  return undefined;
}
