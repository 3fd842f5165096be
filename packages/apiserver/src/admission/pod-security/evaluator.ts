import type { ObjectMeta, PodSpec } from '@svc/api';
import { BASELINE_CHECKS } from './baseline-checks.js';
import type { Check, CheckPod, CheckResult, VersionedCheck } from './checks.js';
import { RESTRICTED_CHECKS } from './restricted-checks.js';
import { levelVersionString, olderThan, type LevelVersion } from './policy.js';

/** The forbidden results of one evaluation, in check order. */
export interface AggregateResult {
  allowed: boolean;
  reasons: string[];
  details: string[];
}

export function aggregate(results: readonly CheckResult[]): AggregateResult {
  const bad = results.filter((r) => !r.allowed);
  return {
    allowed: bad.length === 0,
    reasons: bad.map((r) => r.reason || 'unknown forbidden reason'),
    details: bad.map((r) => r.detail ?? ''),
  };
}

/** `reason1, reason2`: what a namespace relabel reports per pod. */
export function forbiddenReason(r: AggregateResult): string {
  return r.reasons.join(', ');
}

/** `reason1 (detail1), reason2 (detail2)`: what enforce, audit and warn report. */
export function forbiddenDetail(r: AggregateResult): string {
  return r.reasons.map((reason, i) => (r.details[i] ? `${reason} (${r.details[i]})` : reason)).join(', ');
}

/**
 * Which checks run at each level and version, built once from the check table as Kubernetes'
 * registry does: a check's entry holds from its minimum version to the next entry's; restricted
 * runs the baseline checks it does not override at that version; checks run baseline first,
 * then restricted, each group by id. `latest`, and any version newer than the newest a check
 * names, evaluate as that newest version.
 */
export class Evaluator {
  private readonly baseline: CheckPod[][] = [];
  private readonly restricted: CheckPod[][] = [];
  private readonly maxMinor: number;

  constructor(checks: readonly Check[] = [...BASELINE_CHECKS, ...RESTRICTED_CHECKS]) {
    this.maxMinor = Math.max(...checks.flatMap((c) => c.versions.map((v) => v.minimumVersion.minor)));
    const ids = (level: Check['level']): string[] =>
      checks
        .filter((c) => c.level === level)
        .map((c) => c.id)
        .sort();
    const order = [...ids('baseline'), ...ids('restricted')];
    const byId = new Map(checks.map((c) => [c.id, c]));
    for (let minor = 0; minor <= this.maxMinor; minor++) {
      const at = (c: Check): VersionedCheck | undefined =>
        c.versions.filter((v) => v.minimumVersion.minor <= minor).at(-1);
      const overridden = new Set(checks.filter((c) => c.level === 'restricted').flatMap((c) => at(c)?.overrides ?? []));
      const pick = (keep: (c: Check) => boolean): CheckPod[] =>
        order.flatMap((id) => {
          const c = byId.get(id);
          const v = c && keep(c) ? at(c) : undefined;
          return v ? [v.check] : [];
        });
      this.baseline.push(pick((c) => c.level === 'baseline'));
      this.restricted.push(pick((c) => c.level === 'restricted' || !overridden.has(c.id)));
    }
  }

  /** The results of every check of `lv` on the pod (none for privileged). */
  evaluate(lv: LevelVersion, meta: ObjectMeta, spec: PodSpec): CheckResult[] {
    if (lv.level === 'privileged') return [];
    const minor = olderThan({ latest: false, minor: this.maxMinor }, lv.version) ? this.maxMinor : lv.version.minor;
    const checks = (lv.level === 'baseline' ? this.baseline : this.restricted)[minor] ?? [];
    return checks.map((check) => check(meta, spec));
  }

  /** The evaluation of `lv`, cached by level and version for the several modes of one request. */
  cached(): (lv: LevelVersion, meta: ObjectMeta, spec: PodSpec) => AggregateResult {
    const seen = new Map<string, AggregateResult>();
    return (lv, meta, spec) => {
      const key = levelVersionString(lv);
      let r = seen.get(key);
      if (!r) seen.set(key, (r = aggregate(this.evaluate(lv, meta, spec))));
      return r;
    };
  }
}
