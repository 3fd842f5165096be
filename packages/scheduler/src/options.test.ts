import { CommanderError } from 'commander';
import { parseSchedulerOptions } from './options.js';

const parse = (...args: string[]) => parseSchedulerOptions(args, { quiet: true });

function parseError(...args: string[]): string {
  try {
    parse(...args);
  } catch (e) {
    expect(e).toBeInstanceOf(CommanderError);
    return (e as Error).message;
  }
  throw new Error(`parsing ${args.join(' ')} did not fail`);
}

describe('svc-scheduler flags', () => {
  it("has kube-scheduler's defaults", () => {
    const { featureGates, ...rest } = parse();
    expect(featureGates.enabled('SchedulerQueueingHints')).toBe(true);
    expect(rest).toEqual({
      svcconfig: undefined,
      master: undefined,
      apiQps: 50,
      apiBurst: 100,
      apiContentType: 'application/vnd.svc.protobuf',
      bindAddress: '0.0.0.0',
      securePort: 10259,
      certDir: '',
      tlsCertFile: undefined,
      tlsPrivateKeyFile: undefined,
      authenticationKubeconfig: undefined,
      authenticationSkipLookup: false,
      authenticationTolerateLookupFailure: true,
      authenticationTokenWebhookCacheTtlMs: 10_000,
      authorizationKubeconfig: undefined,
      authorizationAlwaysAllowPaths: ['/healthz', '/readyz', '/livez'],
      authorizationWebhookCacheAuthorizedTtlMs: 10_000,
      authorizationWebhookCacheUnauthorizedTtlMs: 10_000,
      clientCaFile: undefined,
      leaderElect: true,
      leaseDurationMs: 15_000,
      renewDeadlineMs: 10_000,
      retryPeriodMs: 2000,
      resourceLock: 'leases',
      leaseName: 'svc-scheduler',
      leaseNamespace: 'svc-system',
      podMaxInUnschedulablePodsDurationMs: 300_000,
      emulatedVersion: undefined,
      metrics: { disabledMetrics: [], showHiddenMetricsForVersion: undefined, allowListMapping: undefined },
      naming: 'svc',
      loggingFormat: 'text',
      verbosity: 0,
    });
  });

  it('takes feature gates, the emulated version and the metrics flags', () => {
    const o = parse(
      '--emulated-version=svc=1.31',
      '--feature-gates=svc:AllAlpha=true,ServiceAccountTokenNodeBinding=true',
      '--disabled-metrics=scheduler_pending_pods',
      '--show-hidden-metrics-for-version=1.31',
      '--allow-metric-labels=scheduler_schedule_attempts_total,result=scheduled',
    );
    expect(o.emulatedVersion).toBe('1.31');
    expect(o.featureGates.enabled('SchedulerQueueingHints')).toBe(false);
    expect(o.featureGates.enabled('InPlacePodVerticalScaling')).toBe(true);
    expect(o.metrics).toEqual({
      disabledMetrics: ['scheduler_pending_pods'],
      showHiddenMetricsForVersion: '1.31',
      allowListMapping: { 'scheduler_schedule_attempts_total,result': ['scheduled'] },
    });
  });

  it('follows --naming for the lease namespace and content type; --kubeconfig is --svcconfig', () => {
    expect(parse('--naming=kubernetes')).toMatchObject({
      leaseNamespace: 'kube-system',
      leaseName: 'svc-scheduler',
      apiContentType: 'application/vnd.kubernetes.protobuf',
    });
    expect(parse('--kubeconfig', '/x/scheduler.conf').svcconfig).toBe('/x/scheduler.conf');
    expect(parse('--authorization-always-allow-paths=/healthz,/metrics').authorizationAlwaysAllowPaths).toEqual([
      '/healthz',
      '/metrics',
    ]);
    expect(parse('--leader-elect=false', '--secure-port=0').leaderElect).toBe(false);
  });

  it('refuses bad values with the flag named', () => {
    expect(parseError('--leader-elect-renew-deadline=15s')).toMatch(
      /--leader-elect-renew-deadline \(15s\) must be less than --leader-elect-lease-duration \(15s\)/,
    );
    expect(parseError('--svcconfig', '/a', '--kubeconfig', '/b')).toMatch(/different files/);
    expect(parseError('--secure-port=70000')).toMatch(/secure-port/);
    expect(parseError('--svc-api-qps=fast')).toMatch(/svc-api-qps/);
    expect(parseError('--svc-api-content-type=text/plain')).toMatch(/svc-api-content-type/);
    expect(parseError('--tls-cert-file=a.crt')).toMatch(/must be given together/);
    expect(parseError('--controllers=x')).toMatch(/unknown option/);
    expect(parseError('--emulated-version=svc=1.30')).toMatch(
      /invalid argument for "--emulated-version" flag: svc=1.30: emulation version 1.30 is not between \[1.31\]/,
    );
    expect(parseError('--feature-gates=ServiceAccountTokenJTI=false')).toMatch(
      /invalid argument for "--feature-gates" flag: cannot set feature gate ServiceAccountTokenJTI to false, feature is locked to true/,
    );
    expect(parseError('--feature-gates=wardle:Foo=true')).toMatch(/component not registered: wardle/);
    expect(parseError('--show-hidden-metrics-for-version=1.30')).toMatch(/value '1.31'/);
    expect(parseError('--allow-metric-labels=x=y')).toMatch(/--allow-metric-labels must have/);
  });
});
