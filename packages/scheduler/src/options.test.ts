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
    expect(parse()).toEqual({
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
      naming: 'svc',
      loggingFormat: 'text',
      verbosity: 0,
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
  });
});
