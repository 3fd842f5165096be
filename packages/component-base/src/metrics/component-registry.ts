import { Counter, Registry, type Metric } from 'prom-client';
import { METRIC_STABILITY, isHiddenIn, isRawMetric, type MetricStability } from './stability.js';

/** The value an out-of-list label value is recorded as (Kubernetes' label allow-list). */
export const UNEXPECTED_LABEL_VALUE = 'unexpected';

/** What `--disabled-metrics`, `--show-hidden-metrics-for-version` and `--allow-metric-labels*` decided. */
export interface MetricsPolicy {
  /** Fully qualified names never exposed; wins over showing hidden metrics. */
  disabledMetrics?: readonly string[];
  /** Set (to the previous minor release) to expose hidden metrics too. */
  showHiddenMetricsForVersion?: string;
  /** `<metric>,<label>` → allowed values; other values are recorded as `unexpected`. */
  allowListMapping?: Readonly<Record<string, readonly string[]>>;
}

export interface ComponentRegistryOptions extends MetricsPolicy {
  /** `major.minor` of the binary (hiding is judged against it). */
  currentVersion?: string;
  /** Declared classes; Kubernetes 1.32's table by default. */
  stability?: Readonly<Record<string, MetricStability>>;
}

/** The release whose rules our binaries follow. */
export const CURRENT_RELEASE = '1.32';

// prom-client's recording methods that take a labels object first. Counter and Histogram bind
// `inc`/`observe` from the *WithoutExemplar methods after their base constructor has registered
// the metric, so wrapping those as own properties at registration covers every path.
const LABELLED_METHODS = [
  'inc',
  'incWithoutExemplar',
  'dec',
  'set',
  'setToCurrentTime',
  'observe',
  'observeWithoutExemplar',
  'zero',
] as const;

type Labels = Record<string, string | number>;

/** prom-client's typings do not declare `name` on every metric; each one has it. */
function nameOf(metric: Metric): string {
  return (metric as unknown as { name: string }).name;
}
type AnyFn = (...args: unknown[]) => unknown;

function isLabels(v: unknown): v is Labels {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * A registry applying Kubernetes' metric policy as metrics register: the description is prefixed
 * with the stability class (`[STABLE] ...`) and, when deprecated, `(Deprecated from x.y)`; a
 * deprecated metric past its window is hidden (not exposed) unless hidden metrics are shown; a
 * disabled metric is never exposed; label values outside an allow-list are recorded as
 * `unexpected`. Hidden and disabled metrics still accept recordings (their callers need not know).
 * It counts what it saw in `registered_metrics_total`, `disabled_metrics_total` and
 * `hidden_metrics_total`, as Kubernetes does.
 */
export class ComponentRegistry extends Registry {
  private disabled = new Set<string>();
  private showHidden = false;
  private allow = new Map<string, Map<string, Set<string>>>();
  private readonly currentVersion: string;
  private readonly stability: Readonly<Record<string, MetricStability>>;
  private readonly registeredTotal: Counter<'stability_level' | 'deprecated_version'>;
  private readonly disabledTotal: Counter;
  private readonly hiddenTotal: Counter;
  private readonly seen: Metric[] = [];
  private readonly wrapped = new WeakSet<Metric>();
  private hiddenNames: string[] = [];

  constructor(opts: ComponentRegistryOptions = {}) {
    super();
    this.currentVersion = opts.currentVersion ?? CURRENT_RELEASE;
    this.stability = opts.stability ?? METRIC_STABILITY;
    this.setPolicy(opts);
    this.registeredTotal = new Counter({
      name: 'registered_metrics_total',
      help: 'The count of registered metrics broken by stability level and deprecation version.',
      labelNames: ['stability_level', 'deprecated_version'],
      registers: [],
    });
    this.disabledTotal = new Counter({
      name: 'disabled_metrics_total',
      help: 'The count of disabled metrics.',
      registers: [],
    });
    this.hiddenTotal = new Counter({
      name: 'hidden_metrics_total',
      help: 'The count of hidden metrics.',
      registers: [],
    });
    for (const m of [this.registeredTotal, this.disabledTotal, this.hiddenTotal]) this.registerMetric(m);
  }

  /**
   * Applies a policy to every metric registered so far and to later ones (a component builds
   * its metrics before its flags are read in some paths). Counts start again from the new policy.
   */
  configure(policy: MetricsPolicy): void {
    this.setPolicy(policy);
    for (const m of this.seen) {
      super.removeSingleMetric(nameOf(m));
      this.installAllowList(m);
    }
    this.hiddenNames = [];
    for (const c of [this.registeredTotal, this.disabledTotal, this.hiddenTotal]) c.reset();
    for (const m of this.seen) this.admit(m);
  }

  private setPolicy(policy: MetricsPolicy): void {
    this.disabled = new Set(policy.disabledMetrics ?? []);
    this.showHidden = policy.showHiddenMetricsForVersion !== undefined && policy.showHiddenMetricsForVersion !== '';
    this.allow = new Map();
    for (const [key, values] of Object.entries(policy.allowListMapping ?? {})) {
      const [metric = '', label = ''] = key.split(',');
      const perMetric = this.allow.get(metric) ?? new Map<string, Set<string>>();
      perMetric.set(label, new Set(values));
      this.allow.set(metric, perMetric);
    }
  }

  /** Names of the metrics hidden by deprecation (for the start-up log). */
  hiddenMetrics(): readonly string[] {
    return this.hiddenNames;
  }

  override registerMetric(metric: Metric): void {
    const name = nameOf(metric);
    if (isRawMetric(name)) {
      super.registerMetric(metric);
      return;
    }
    const declared = this.declared(name);
    const m = metric as unknown as { help: string };
    const deprecation =
      declared.deprecatedVersion !== undefined ? `(Deprecated from ${declared.deprecatedVersion}) ` : '';
    if (!m.help.startsWith('[')) m.help = `[${declared.stability}] ${deprecation}${m.help}`;
    this.installAllowList(metric);
    this.seen.push(metric);
    this.admit(metric);
  }

  private declared(name: string): MetricStability {
    return this.stability[name] ?? { stability: 'ALPHA' };
  }

  /** Exposes the metric unless disabled or hidden. */
  private admit(metric: Metric): void {
    const name = nameOf(metric);
    const declared = this.declared(name);
    if (this.disabled.has(name)) {
      this.disabledTotal.inc();
      return;
    }
    if (isHiddenIn(declared, this.currentVersion) && !this.showHidden) {
      this.hiddenTotal.inc();
      this.hiddenNames.push(name);
      return;
    }
    this.registeredTotal.inc({
      stability_level: declared.stability,
      deprecated_version: declared.deprecatedVersion ?? '',
    });
    super.registerMetric(metric);
  }

  /**
   * Wraps the recording methods of a metric that has an allow-list so label values outside it
   * become `unexpected` (once per metric; metrics without a list are left as prom-client made them).
   */
  private installAllowList(metric: Metric): void {
    const labelNames = (metric as unknown as { labelNames?: readonly string[] }).labelNames ?? [];
    if (labelNames.length === 0 || !this.allow.has(nameOf(metric)) || this.wrapped.has(metric)) return;
    this.wrapped.add(metric);
    const filter = (labels: Labels): Labels => {
      const lists = this.allow.get(nameOf(metric));
      if (!lists) return labels;
      let out: Labels | undefined;
      for (const [label, allowed] of lists) {
        const v = labels[label];
        if (v !== undefined && !allowed.has(String(v))) {
          out ??= { ...labels };
          out[label] = UNEXPECTED_LABEL_VALUE;
        }
      }
      return out ?? labels;
    };
    const target = metric as unknown as Record<string, unknown>;
    for (const method of LABELLED_METHODS) {
      const orig = target[method];
      if (typeof orig !== 'function') continue;
      const bound = (orig as AnyFn).bind(metric);
      target[method] = (...args: unknown[]): unknown => {
        if (isLabels(args[0])) args[0] = filter(args[0]);
        return bound(...args);
      };
    }
    const startTimer = target.startTimer;
    if (typeof startTimer === 'function') {
      const bound = (startTimer as AnyFn).bind(metric);
      target.startTimer = (...args: unknown[]): unknown => {
        if (isLabels(args[0])) args[0] = filter(args[0]);
        const end = bound(...args) as AnyFn;
        return (...endArgs: unknown[]): unknown => {
          if (isLabels(endArgs[0])) endArgs[0] = filter(endArgs[0]);
          return end(...endArgs);
        };
      };
    }
    // `labels(...)` takes an object or the values in label order; the children it returns
    // record without passing through the wrapped methods (Histogram), so filter here too.
    for (const method of ['labels', 'remove'] as const) {
      const orig = target[method];
      if (typeof orig !== 'function') continue;
      const bound = (orig as AnyFn).bind(metric);
      target[method] = (...args: unknown[]): unknown => {
        if (!this.allow.has(nameOf(metric))) return bound(...args);
        if (args.length === 1 && isLabels(args[0])) return bound(filter(args[0]));
        const named: Labels = {};
        labelNames.forEach((n, i) => {
          const v = args[i];
          if (typeof v === 'string' || typeof v === 'number') named[n] = v;
        });
        const filtered = filter(named);
        return bound(...labelNames.map((n, i) => (n in filtered ? filtered[n] : args[i])));
      };
    }
  }
}
