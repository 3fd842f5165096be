import { Command } from 'commander';
import { isNamingScheme, naming, type NamingScheme } from '@svc/api';
import {
  apiClientOptions,
  durationOption,
  leaderElectionOptions,
  namingOption,
  parseFlags,
  secureServingOptions,
  withApiClientFlags,
  withLeaderElectionFlags,
  featureOptions,
  metricsPolicy,
  withFeatureFlags,
  withLoggingFlags,
  withMetricsFlags,
  withSecureServingFlags,
  type ApiClientOptions,
  type FeatureOptions,
  type MetricsPolicy,
  type DelegatedServingOptions,
  type LeaderElectionOptions,
  type LogFormat,
} from '@svc/component-base';

/**
 * The scheduler name pods ask for in `spec.schedulerName` (the API defaults it): Kubernetes'
 * default profile name, the same under every naming.
 */
export const DEFAULT_SCHEDULER_NAME = 'default-scheduler';

/** Every svc-scheduler setting, parsed and validated. Durations are milliseconds. */
export interface SchedulerOptions
  extends ApiClientOptions, DelegatedServingOptions, LeaderElectionOptions, FeatureOptions {
  /** `--disabled-metrics`, `--show-hidden-metrics-for-version`, `--allow-metric-labels*`. */
  metrics: MetricsPolicy;
  /** A pod left this long among the unschedulable ones is retried anyway. */
  podMaxInUnschedulablePodsDurationMs: number;
  naming: NamingScheme;
  loggingFormat: LogFormat;
  verbosity: number;
}

/** kube-scheduler's flags under svc's names (`--kube-api-*` → `--svc-api-*`, `--kubeconfig` → `--svcconfig`). */
export function schedulerCommand(): Command {
  const n = naming();
  const cmd = new Command(n.schedulerName)
    .description(
      'The scheduler assigns pending pods to nodes: it filters the nodes a pod fits, scores them and binds the pod to the best one.',
    )
    .allowExcessArguments(false);
  withApiClientFlags(cmd, { qps: 50, burst: 100 });
  withSecureServingFlags(cmd, { securePort: 10259, tolerateLookupFailure: true });
  withLeaderElectionFlags(cmd, { leaseName: n.schedulerName });
  cmd.addOption(
    durationOption(
      '--pod-max-in-unschedulable-pods-duration',
      'DEPRECATED: the maximum time a pod can stay in the unschedulable pods before it is retried.',
      300_000,
    ),
  );
  withFeatureFlags(cmd);
  withMetricsFlags(cmd);
  withLoggingFlags(cmd.addOption(namingOption()));
  cmd.configureHelp({ sortOptions: false });
  return cmd;
}

/** Parses argv (without node and script); throws `CommanderError` on bad input. */
export function parseSchedulerOptions(argv: string[], opts: { quiet?: boolean } = {}): SchedulerOptions {
  const parsed = parseFlags(schedulerCommand(), argv, opts);
  const { o, fail } = parsed;
  const scheme = String(o.naming);
  if (!isNamingScheme(scheme)) return fail(`--naming: unknown naming ${scheme}`);
  return {
    ...apiClientOptions(parsed, scheme),
    ...secureServingOptions(parsed),
    ...leaderElectionOptions(parsed, scheme),
    ...featureOptions(parsed),
    metrics: metricsPolicy(parsed),
    podMaxInUnschedulablePodsDurationMs: o.podMaxInUnschedulablePodsDuration as number,
    naming: scheme,
    loggingFormat: o.loggingFormat as LogFormat,
    verbosity: o.v as number,
  };
}
