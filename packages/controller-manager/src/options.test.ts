import { CommanderError } from 'commander';
import { parseControllerManagerOptions } from './options.js';
import { parseControllers } from './controller-names.js';

const parse = (...args: string[]) => parseControllerManagerOptions(args, { quiet: true });

function parseError(...args: string[]): string {
  try {
    parse(...args);
  } catch (e) {
    expect(e).toBeInstanceOf(CommanderError);
    return (e as Error).message;
  }
  throw new Error(`parsing ${args.join(' ')} did not fail`);
}

describe('svc-controller-manager flags', () => {
  it("has the spec table's defaults", () => {
    const o = parse();
    expect(o).toMatchObject({
      bindAddress: '0.0.0.0',
      securePort: 10257,
      apiQps: 20,
      apiBurst: 30,
      apiContentType: 'application/vnd.svc.protobuf',
      clusterName: 'svc',
      clusterSigningDurationMs: 8760 * 3600_000,
      enableGarbageCollector: true,
      leaderElect: true,
      leaseDurationMs: 15_000,
      renewDeadlineMs: 10_000,
      retryPeriodMs: 2000,
      resourceLock: 'leases',
      leaseName: 'svc-controller-manager',
      leaseNamespace: 'svc-system',
      minResyncPeriodMs: 12 * 3600_000,
      namespaceSyncPeriodMs: 300_000,
      resourceQuotaSyncPeriodMs: 300_000,
      nodeEvictionRate: 0.1,
      largeClusterSizeThreshold: 50,
      nodeMonitorGracePeriodMs: 40_000,
      nodeMonitorPeriodMs: 5000,
      nodeStartupGracePeriodMs: 60_000,
      authenticationTokenWebhookCacheTtlMs: 10_000,
      authorizationWebhookCacheAuthorizedTtlMs: 10_000,
      authorizationWebhookCacheUnauthorizedTtlMs: 10_000,
      authorizationAlwaysAllowPaths: ['/healthz', '/readyz', '/livez'],
      authenticationSkipLookup: false,
      authenticationTolerateLookupFailure: false,
      ignoredFlags: [],
    });
    expect(o.concurrentSyncs).toEqual({
      'cron-job': 5,
      // Not in the spec's table: Kubernetes 1.32's default.
      daemonset: 2,
      deployment: 5,
      endpoint: 5,
      ephemeralvolume: 5,
      gc: 20,
      'horizontal-pod-autoscaler': 5,
      job: 5,
      namespace: 10,
      rc: 5,
      replicaset: 5,
      'resource-quota': 5,
      'service-endpoint': 5,
      service: 1,
      'serviceaccount-token': 5,
      statefulset: 5,
      'ttl-after-finished': 5,
      'validating-admission-policy-status': 5,
    });
  });

  it('spells the naming-dependent defaults the Kubernetes way under --naming=kubernetes', () => {
    const o = parse('--naming=kubernetes');
    expect(o).toMatchObject({
      clusterName: 'kubernetes',
      leaseNamespace: 'kube-system',
      apiContentType: 'application/vnd.kubernetes.protobuf',
    });
  });

  it('takes --kubeconfig as an alias of --svcconfig', () => {
    expect(parse('--kubeconfig', '/x/admin.conf').svcconfig).toBe('/x/admin.conf');
    expect(parse('--svcconfig', '/y').svcconfig).toBe('/y');
    expect(parseError('--svcconfig', '/a', '--kubeconfig', '/b')).toMatch(/different files/);
  });

  it('refuses a renew deadline that is not below the lease duration', () => {
    expect(parseError('--leader-elect-renew-deadline=15s')).toMatch(
      /--leader-elect-renew-deadline \(15s\) must be less than --leader-elect-lease-duration \(15s\)/,
    );
    expect(parse('--leader-elect-lease-duration=30s', '--leader-elect-renew-deadline=20s').renewDeadlineMs).toBe(
      20_000,
    );
  });

  it('refuses bad values with the flag named', () => {
    expect(parseError('--leader-elect-lease-duration=soon')).toMatch(/leader-elect-lease-duration/);
    expect(parseError('--svc-api-qps=fast')).toMatch(/svc-api-qps/);
    expect(parseError('--secure-port=70000')).toMatch(/secure-port/);
    expect(parseError('--leader-elect-resource-lock=endpoints')).toMatch(/leader-elect-resource-lock/);
    expect(parseError('--svc-api-content-type=text/plain')).toMatch(/svc-api-content-type/);
    expect(parseError('--concurrent-namespace-syncs=0')).toMatch(/concurrent-namespace-syncs/);
    expect(parseError('--attach-detach-reconcile-sync-period=1s')).toMatch(/must exceed 1 second/);
    expect(parseError('--cluster-cidr=10.0.0.0/16')).toMatch(/allocate-node-cidrs/);
    expect(parseError('--no-such-flag')).toMatch(/unknown option/);
  });

  it('takes the generic signing pair or per-signer pairs, never both', () => {
    expect(parse('--cluster-signing-cert-file=ca.crt', '--cluster-signing-key-file=ca.key').clusterSigning).toEqual({
      certFile: 'ca.crt',
      keyFile: 'ca.key',
    });
    expect(
      parse('--cluster-signing-svclet-serving-cert-file=s.crt', '--cluster-signing-svclet-serving-key-file=s.key')
        .signerFiles,
    ).toEqual({ nodeServing: { certFile: 's.crt', keyFile: 's.key' } });
    expect(parseError('--cluster-signing-cert-file=ca.crt')).toMatch(/must be given together/);
    expect(
      parseError(
        '--cluster-signing-cert-file=ca.crt',
        '--cluster-signing-key-file=ca.key',
        '--cluster-signing-svc-apiserver-client-cert-file=c.crt',
        '--cluster-signing-svc-apiserver-client-key-file=c.key',
      ),
    ).toMatch(/cannot be set together/);
  });

  it('accepts flags of controllers it does not run and lists them once', () => {
    const o = parse(
      '--attach-detach-reconcile-sync-period=2m',
      '--concurrent-ephemeralvolume-syncs=3',
      '--concurrent-deployment-syncs=2',
      '--concurrent-job-syncs=4',
      '--concurrent-statefulset-syncs=3',
      '--legacy-service-account-token-clean-up-period=720h',
      '--endpoint-updates-batch-period=1s',
      '--endpointslice-updates-batch-period=500ms',
    );
    expect(o.endpointUpdatesBatchPeriodMs).toBe(1000);
    expect(o.endpointSliceUpdatesBatchPeriodMs).toBe(500);
    expect(o.ignoredFlags).toEqual([
      '--concurrent-ephemeralvolume-syncs',
      '--attach-detach-reconcile-sync-period (persistentvolume-attach-detach-controller)',
    ]);
    expect(o.concurrentSyncs.deployment).toBe(2);
    expect(o.concurrentSyncs.job).toBe(4);
    expect(o.concurrentSyncs.statefulset).toBe(3);
    expect(o.legacyServiceAccountTokenCleanUpPeriodMs).toBe(720 * 3600_000);
    expect(parseError('--concurrent-job-syncs=0')).toMatch(/--concurrent-job-syncs must be at least 1/);
    expect(parseError('--concurrent-statefulset-syncs=0')).toMatch(/--concurrent-statefulset-syncs must be at least 1/);
    expect(parseError('--legacy-service-account-token-clean-up-period=0s')).toMatch(
      /--legacy-service-account-token-clean-up-period: invalid CleanUpPeriod: 0s/,
    );
    // Only checked when the cleaner runs, as Kubernetes checks it in the controller's constructor.
    expect(
      parse(
        '--controllers=*,-legacy-service-account-token-cleaner',
        '--legacy-service-account-token-clean-up-period=0s',
      ).legacyServiceAccountTokenCleanUpPeriodMs,
    ).toBe(0);
  });
});

describe('--controllers', () => {
  it('* enables everything on by default, not the token cleaner and bootstrap signer', () => {
    const s = parseControllers(['*']);
    expect(s.enabled.has('namespace-controller')).toBe(true);
    expect(s.enabled.has('garbage-collector-controller')).toBe(true);
    expect(s.enabled.has('token-cleaner-controller')).toBe(false);
    expect(s.enabled.has('bootstrap-signer-controller')).toBe(false);
    expect(s.enabled.has('job-controller')).toBe(true);
    expect(s.notImplemented).toContain('ephemeral-volume-controller');
  });

  it('turns the two on by either spelling', () => {
    for (const items of [
      ['*', 'tokencleaner', 'bootstrapsigner'],
      ['*', 'token-cleaner-controller', 'bootstrap-signer-controller'],
    ]) {
      const s = parseControllers(items);
      expect(s.enabled.has('token-cleaner-controller')).toBe(true);
      expect(s.enabled.has('bootstrap-signer-controller')).toBe(true);
    }
    expect(
      parse('--controllers=*,tokencleaner,bootstrapsigner').controllers.enabled.has('bootstrap-signer-controller'),
    ).toBe(true);
  });

  it('-foo disables, a bare name enables only that', () => {
    const s = parseControllers(['*', '-namespace', '-garbage-collector-controller']);
    expect(s.enabled.has('namespace-controller')).toBe(false);
    expect(s.enabled.has('garbage-collector-controller')).toBe(false);
    expect(s.enabled.has('serviceaccount-controller')).toBe(true);
    expect([...parseControllers(['namespace']).enabled]).toEqual(['namespace-controller']);
    expect(parseControllers([]).enabled.size).toBe(0);
  });

  it('refuses unknown names', () => {
    expect(() => parseControllers(['*', 'bogus'])).toThrow(/"bogus" is not in the list of known controllers/);
    expect(parseError('--controllers=-nope')).toMatch(/--controllers: "-nope"/);
  });
});
