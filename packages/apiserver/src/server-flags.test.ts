// The control-plane flags of server-flags.ts: defaults as Kubernetes 1.32 and bad values refused
// (the binary exits 2 with the one line asserted here).
import { parseFlags, refusal } from './options-testing.js';

describe('svc-apiserver control-plane flags', () => {
  it("defaults as Kubernetes' flags", () => {
    expect(parseFlags()).toMatchObject({
      endpointReconcilerType: 'lease',
      apiserverCount: 1,
      svcServiceNodePort: 0,
      deleteCollectionWorkers: 1,
      enableGarbageCollector: true,
      allowPrivileged: false,
    });
    expect(
      parseFlags(
        '--endpoint-reconciler-type=master-count',
        '--apiserver-count=3',
        '--svc-service-node-port=30443',
        '--delete-collection-workers=4',
        '--enable-garbage-collector=false',
        '--allow-privileged',
        '--advertise-address=10.0.0.5',
        '--peer-advertise-ip=10.0.0.6',
        '--peer-advertise-port=6443',
        '--peer-ca-file=/tmp/ca.crt',
      ),
    ).toMatchObject({
      endpointReconcilerType: 'master-count',
      apiserverCount: 3,
      svcServiceNodePort: 30443,
      deleteCollectionWorkers: 4,
      enableGarbageCollector: false,
      allowPrivileged: true,
      advertiseAddress: '10.0.0.5',
      peerAdvertiseIp: '10.0.0.6',
      peerAdvertisePort: 6443,
      peerCaFile: '/tmp/ca.crt',
    });
  });

  it.each([
    [
      ['--endpoint-reconciler-type=etcd'],
      '--endpoint-reconciler-type: invalid value "etcd": supported values: master-count, lease, none',
    ],
    [['--apiserver-count=0'], '--apiserver-count: 0 must be a positive number'],
    [['--svc-service-node-port=-1'], '--svc-service-node-port: -1 must be between 0 and 65535, inclusive'],
    [['--svc-service-node-port=443'], '--svc-service-node-port: 443 must be inside the node port range 30000-32767'],
    [['--delete-collection-workers=0'], '--delete-collection-workers: 0 must be at least 1'],
    [['--advertise-address=nowhere'], 'invalid argument "nowhere" for "--advertise-address" flag: failed to parse IP'],
    [['--peer-advertise-ip=10.0.0'], '--peer-advertise-ip: "10.0.0" is not a valid IP address'],
    [['--peer-advertise-port=0'], '--peer-advertise-port: 0 must be between 1 and 65535, inclusive'],
  ])('%j exits 2: %s', (args, message) => {
    const e = refusal(args);
    expect(e.exitCode).toBe(2);
    expect(e.message).toBe(`error: ${message}`);
  });

  // exitOnFlagError turns commander's own refusals into exit 2 as well.
  it('refuses values that do not parse as the flag type', () => {
    expect(refusal(['--apiserver-count=two']).code).toBe('commander.invalidArgument');
    expect(refusal(['--allow-privileged=maybe']).code).toBe('commander.invalidArgument');
  });
});
