import type { HPAScalingRules, HorizontalPodAutoscalerBehavior } from '@svc/api';

/**
 * Kubernetes 1.32's normalization of a desired replica count (horizontal.go): the stabilization
 * window over past recommendations, then the limits — min/max replicas and, without a
 * `behavior`, at most max(2 × current, 4); with one, its scaling policies over the scale events
 * of each policy's period. Keeps that history per HPA key.
 */
export interface Limited {
  replicas: number;
  /** AbleToScale after stabilization: `ReadyForNewScale`, `ScaleUpStabilized` or `ScaleDownStabilized`. */
  ableReason: string;
  ableMessage: string;
  /** ScalingLimited: True when `replicas` differs from the stabilized recommendation. */
  limited: boolean;
  limitReason: string;
  limitMessage: string;
}

interface Recommendation {
  replicas: number;
  atMs: number;
}

interface ScaleEvent {
  change: number;
  atMs: number;
  outdated: boolean;
}

const SCALE_UP_LIMIT_FACTOR = 2;
const SCALE_UP_LIMIT_MINIMUM = 4;
const READY = { reason: 'ReadyForNewScale', message: 'recommended size matches current size' };
const WITHIN = { reason: 'DesiredWithinRange', message: 'the desired count is within the acceptable range' };
const TOO_FEW = {
  reason: 'TooFewReplicas',
  message: 'the desired replica count is less than the minimum replica count',
};
const TOO_MANY = {
  reason: 'TooManyReplicas',
  message: 'the desired replica count is more than the maximum replica count',
};
const UP_LIMIT = {
  reason: 'ScaleUpLimit',
  message: 'the desired replica count is increasing faster than the maximum scale rate',
};
const DOWN_LIMIT = {
  reason: 'ScaleDownLimit',
  message: 'the desired replica count is decreasing faster than the maximum scale rate',
};
const DOWN_STABILIZED = {
  reason: 'ScaleDownStabilized',
  message: 'recent recommendations were higher than current one, applying the highest recent recommendation',
};
const UP_STABILIZED = {
  reason: 'ScaleUpStabilized',
  message: 'recent recommendations were lower than current one, applying the lowest recent recommendation',
};

export interface NormalizeArgs {
  key: string;
  currentReplicas: number;
  desiredReplicas: number;
  minReplicas: number;
  maxReplicas: number;
  /** With its scaleDown window already defaulted from the flag when unset. */
  behavior?: HorizontalPodAutoscalerBehavior;
  nowMs: number;
}

/** Kubernetes' convertDesiredReplicasWithRules (no behavior). */
function withRules(a: NormalizeArgs, desired: number): { replicas: number; reason: string; message: string } {
  const scaleUpLimit = Math.max(SCALE_UP_LIMIT_FACTOR * a.currentReplicas, SCALE_UP_LIMIT_MINIMUM);
  const [max, atMax] = a.maxReplicas > scaleUpLimit ? [scaleUpLimit, UP_LIMIT] : [a.maxReplicas, TOO_MANY];
  if (desired < a.minReplicas) return { replicas: a.minReplicas, ...TOO_FEW };
  if (desired > max) return { replicas: max, ...atMax };
  return { replicas: desired, ...WITHIN };
}

function changeInPeriod(events: readonly ScaleEvent[], o: { periodSeconds: number; nowMs: number }): number {
  const cutoff = o.nowMs - o.periodSeconds * 1000;
  return events.filter((e) => e.atMs > cutoff).reduce((sum, e) => sum + e.change, 0);
}

/** Kubernetes' calculateScaleUpLimitWithScalingRules / calculateScaleDownLimitWithBehaviors. */
export function policyLimit(o: {
  direction: 'up' | 'down';
  currentReplicas: number;
  rules: HPAScalingRules;
  upEvents: readonly ScaleEvent[];
  downEvents: readonly ScaleEvent[];
  nowMs: number;
}): number {
  const select = o.rules.selectPolicy ?? 'Max';
  if (select === 'Disabled') return o.currentReplicas;
  // Scaling up, Max picks the largest proposal; scaling down, Max (the largest change) picks the smallest.
  const pickLargest = (o.direction === 'up') === (select !== 'Min');
  let result = pickLargest ? -Infinity : Infinity;
  for (const p of o.rules.policies ?? []) {
    const added = changeInPeriod(o.upEvents, { periodSeconds: p.periodSeconds, nowMs: o.nowMs });
    const deleted = changeInPeriod(o.downEvents, { periodSeconds: p.periodSeconds, nowMs: o.nowMs });
    const start = o.currentReplicas - added + deleted;
    let proposed: number;
    if (o.direction === 'up') proposed = p.type === 'Pods' ? start + p.value : Math.ceil(start * (1 + p.value / 100));
    else proposed = p.type === 'Pods' ? start - p.value : Math.trunc(start * (1 - p.value / 100));
    result = pickLargest ? Math.max(result, proposed) : Math.min(result, proposed);
  }
  return result;
}

export class ScalingHistory {
  private readonly recommendations = new Map<string, Recommendation[]>();
  private readonly upEvents = new Map<string, ScaleEvent[]>();
  private readonly downEvents = new Map<string, ScaleEvent[]>();

  constructor(private readonly downscaleStabilizationMs: number) {}

  /** Kubernetes' recordInitialRecommendation: the current count is the first recommendation. */
  recordInitial(key: string, replicas: number, nowMs: number): void {
    if (!this.recommendations.has(key)) this.recommendations.set(key, [{ replicas, atMs: nowMs }]);
  }

  forget(key: string): void {
    this.recommendations.delete(key);
    this.upEvents.delete(key);
    this.downEvents.delete(key);
  }

  /** Stores `rec`, replacing an outdated entry (`oldIndex`) if there is one. */
  private remember(key: string, rec: Recommendation, oldIndex: number): void {
    const list = this.recommendations.get(key) ?? [];
    if (oldIndex >= 0) list[oldIndex] = rec;
    else list.push(rec);
    this.recommendations.set(key, list);
  }

  /** Kubernetes' normalizeDesiredReplicas / normalizeDesiredReplicasWithBehaviors. */
  normalize(a: NormalizeArgs): Limited {
    const stabilized = a.behavior ? this.stabilizeWithBehavior(a) : this.stabilize(a);
    const able = stabilized.replicas !== a.desiredReplicas ? stabilized.note : READY;
    const limit = a.behavior ? this.withBehaviorRate(a, stabilized.replicas) : withRules(a, stabilized.replicas);
    return {
      replicas: limit.replicas,
      ableReason: able.reason,
      ableMessage: able.message,
      limited: limit.replicas !== stabilized.replicas,
      limitReason: limit.reason,
      limitMessage: limit.message,
    };
  }

  /** Kubernetes' stabilizeRecommendation: the highest recommendation within the downscale window. */
  private stabilize(a: NormalizeArgs): { replicas: number; note: typeof DOWN_STABILIZED } {
    const cutoff = a.nowMs - this.downscaleStabilizationMs;
    let max = a.desiredReplicas;
    let old = -1;
    (this.recommendations.get(a.key) ?? []).forEach((r, i) => {
      if (r.atMs < cutoff) old = i;
      else if (r.replicas > max) max = r.replicas;
    });
    this.remember(a.key, { replicas: a.desiredReplicas, atMs: a.nowMs }, old);
    return { replicas: max, note: DOWN_STABILIZED };
  }

  /** Kubernetes' stabilizeRecommendationWithBehaviors: within both windows, from the current count. */
  private stabilizeWithBehavior(a: NormalizeArgs): { replicas: number; note: typeof DOWN_STABILIZED } {
    const upCutoff = a.nowMs - (a.behavior?.scaleUp?.stabilizationWindowSeconds ?? 0) * 1000;
    const downCutoff = a.nowMs - (a.behavior?.scaleDown?.stabilizationWindowSeconds ?? 0) * 1000;
    let up = a.desiredReplicas;
    let down = a.desiredReplicas;
    let old = -1;
    (this.recommendations.get(a.key) ?? []).forEach((r, i) => {
      if (r.atMs > upCutoff) up = Math.min(r.replicas, up);
      if (r.atMs > downCutoff) down = Math.max(r.replicas, down);
      if (r.atMs < upCutoff && r.atMs < downCutoff) old = i;
    });
    let replicas = a.currentReplicas;
    if (replicas < up) replicas = up;
    if (replicas > down) replicas = down;
    this.remember(a.key, { replicas: a.desiredReplicas, atMs: a.nowMs }, old);
    return { replicas, note: a.desiredReplicas >= a.currentReplicas ? UP_STABILIZED : DOWN_STABILIZED };
  }

  /** Kubernetes' convertDesiredReplicasWithBehaviorRate. */
  private withBehaviorRate(a: NormalizeArgs, desired: number): { replicas: number; reason: string; message: string } {
    const events = {
      upEvents: this.upEvents.get(a.key) ?? [],
      downEvents: this.downEvents.get(a.key) ?? [],
      nowMs: a.nowMs,
      currentReplicas: a.currentReplicas,
    };
    if (desired > a.currentReplicas && a.behavior?.scaleUp) {
      const limit = Math.max(policyLimit({ ...events, direction: 'up', rules: a.behavior.scaleUp }), a.currentReplicas);
      const [max, why] = a.maxReplicas > limit ? [limit, UP_LIMIT] : [a.maxReplicas, TOO_MANY];
      if (desired > max) return { replicas: max, ...why };
    } else if (desired < a.currentReplicas && a.behavior?.scaleDown) {
      const limit = Math.min(
        policyLimit({ ...events, direction: 'down', rules: a.behavior.scaleDown }),
        a.currentReplicas,
      );
      const [min, why] = a.minReplicas < limit ? [limit, DOWN_LIMIT] : [a.minReplicas, TOO_FEW];
      if (desired < min) return { replicas: min, ...why };
    }
    return { replicas: desired, ...WITHIN };
  }

  /** Kubernetes' storeScaleEvent (only with a behavior: the policies read these). */
  storeScaleEvent(o: {
    key: string;
    behavior?: HorizontalPodAutoscalerBehavior;
    from: number;
    to: number;
    nowMs: number;
  }): void {
    if (!o.behavior) return;
    const up = o.to > o.from;
    const rules = up ? o.behavior.scaleUp : o.behavior.scaleDown;
    const longest = Math.max(0, ...(rules?.policies ?? []).map((p) => p.periodSeconds));
    const map = up ? this.upEvents : this.downEvents;
    const list = map.get(o.key) ?? [];
    let old = -1;
    list.forEach((e, i) => {
      if (e.atMs < o.nowMs - longest * 1000) e.outdated = true;
      if (e.outdated) old = i;
    });
    const event: ScaleEvent = { change: Math.abs(o.to - o.from), atMs: o.nowMs, outdated: false };
    if (old >= 0) list[old] = event;
    else list.push(event);
    map.set(o.key, list);
  }
}
