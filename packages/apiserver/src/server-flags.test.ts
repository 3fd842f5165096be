// The control-plane flags of server-flags.ts: defaults as Kubernetes 1.32 and bad values refused
// (the binary exits 2 with the one line asserted here).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseFlags, refusal } from './options-testing.js';

const dir = mkdtempSync(join(tmpdir(), 'svc-server-flags-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A file in the test's directory with `text`; returns its path. */
function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

const egress = (selections: string): string =>
  `apiVersion: apiserver.svc.io/v1beta1\nkind: EgressSelectorConfiguration\negressSelections:\n${selections}`;
const PROXY = '--feature-gates=UnknownVersionInteroperabilityProxy=true';

describe('svc-apiserver control-plane flags', () => {
  it("defaults as Kubernetes' flags", () => {
    expect(parseFlags()).toMatchObject({
      endpointReconcilerType: 'lease',
      apiserverCount: 1,
      svcServiceNodePort: 0,
      deleteCollectionWorkers: 1,
      workers: 1,
      enableGarbageCollector: true,
      allowPrivileged: false,
      logFlushFrequencyMs: 5000,
      egressSelections: [],
    });
    expect(
      parseFlags(
        '--endpoint-reconciler-type=master-count',
        '--apiserver-count=3',
        '--svc-service-node-port=30443',
        '--delete-collection-workers=4',
        '--workers=2',
        '--audit-log-path=-',
        '--enable-garbage-collector=false',
        '--allow-privileged',
        '--advertise-address=10.0.0.5',
        PROXY,
        '--peer-advertise-ip=10.0.0.6',
        '--peer-advertise-port=6443',
        `--peer-ca-file=${file('peer-ca.crt', '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n')}`,
        '--log-flush-frequency=2s',
      ),
    ).toMatchObject({
      endpointReconcilerType: 'master-count',
      apiserverCount: 3,
      svcServiceNodePort: 30443,
      deleteCollectionWorkers: 4,
      workers: 2,
      enableGarbageCollector: false,
      allowPrivileged: true,
      advertiseAddress: '10.0.0.5',
      peerAdvertiseIp: '10.0.0.6',
      peerAdvertisePort: 6443,
      peerCaFile: join(dir, 'peer-ca.crt'),
      logFlushFrequencyMs: 2000,
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
    [
      ['--service-node-port-range=31000-31999', '--svc-service-node-port=30443'],
      '--svc-service-node-port: 30443 must be inside the node port range 31000-31999',
    ],
    [['--delete-collection-workers=0'], '--delete-collection-workers: 0 must be at least 1'],
    [['--workers=0'], '--workers: 0 must be between 1 and 64, inclusive'],
    [['--workers=65'], '--workers: 65 must be between 1 and 64, inclusive'],
    [
      ['--workers=2', '--secure-port=0'],
      '--workers: several processes cannot share --secure-port 0 (a port chosen by each)',
    ],
    [
      ['--workers=2', '--audit-log-path=/var/log/audit.log'],
      '--workers: several processes cannot rotate one --audit-log-path file; use - or an audit webhook',
    ],
    [
      ['--workers=3', '--debug-socket-path=/run/svc-debug.sock'],
      '--workers: several processes cannot listen on one --debug-socket-path',
    ],
    [['--advertise-address=nowhere'], 'invalid argument "nowhere" for "--advertise-address" flag: failed to parse IP'],
    [[PROXY, '--peer-advertise-ip=10.0.0'], '--peer-advertise-ip: "10.0.0" is not a valid IP address'],
    [[PROXY, '--peer-advertise-port=0'], '--peer-advertise-port: 0 must be between 1 and 65535, inclusive'],
    [
      ['--peer-advertise-ip=10.0.0.6'],
      '--peer-advertise-ip requires UnknownVersionInteroperabilityProxy feature to be turned on',
    ],
    [['--peer-ca-file=/x'], '--peer-ca-file requires UnknownVersionInteroperabilityProxy feature to be turned on'],
    [
      [PROXY, '--peer-ca-file=/nonexistent/ca.crt'],
      "--peer-ca-file: ENOENT: no such file or directory, open '/nonexistent/ca.crt'",
    ],
    [['--log-flush-frequency=0s'], '--log-flush-frequency: 0s must be greater than 0'],
  ])('%j exits 2: %s', (args, message) => {
    const e = refusal(args);
    expect(e.exitCode).toBe(2);
    expect(e.message).toBe(`error: ${message}`);
  });

  it('reads --egress-selector-config-file: Direct selections only, checked as Kubernetes', () => {
    const good = file(
      'egress.yaml',
      egress(
        '- name: cluster\n  connection: {proxyProtocol: Direct}\n- name: master\n  connection: {proxyProtocol: Direct}\n',
      ),
    );
    expect(parseFlags(`--egress-selector-config-file=${good}`).egressSelections).toEqual([
      { name: 'cluster', proxyProtocol: 'Direct' },
      { name: 'controlplane', proxyProtocol: 'Direct' },
    ]);
    const cases: Array<[string, string]> = [
      [
        '- name: nodes\n  connection: {proxyProtocol: Direct}\n',
        'egressSelections[0].name: Unsupported value: "nodes": supported values: "cluster", "controlplane", "etcd"',
      ],
      [
        '- name: etcd\n  connection: {proxyProtocol: Direct}\n- name: etcd\n  connection: {proxyProtocol: Direct}\n',
        'egressSelections[1].name: Duplicate value: "etcd"',
      ],
      [
        '- name: etcd\n  connection: {proxyProtocol: Direct, transport: {uds: {udsName: /x}}}\n',
        'egressSelections[0].connection.transport: Forbidden: transport config should be absent for direct connect',
      ],
      [
        '- name: cluster\n  connection: {proxyProtocol: HTTPConnect, transport: {tcp: {url: "https://p:8131"}}}\n',
        'egressSelections[0].connection.proxyProtocol: HTTPConnect is not supported by this server: it connects directly only (use Direct or leave cluster out)',
      ],
    ];
    for (const [i, [selections, message]] of cases.entries()) {
      const path = file(`bad-${i}.yaml`, egress(selections));
      expect(refusal([`--egress-selector-config-file=${path}`]).message).toBe(
        `error: --egress-selector-config-file: ${path}: ${message}`,
      );
    }
    const wrongKind = file('kind.yaml', 'apiVersion: apiserver.svc.io/v1beta1\nkind: AdmissionConfiguration\n');
    expect(refusal([`--egress-selector-config-file=${wrongKind}`]).message).toMatch(
      /no kind "AdmissionConfiguration" is registered/,
    );
    expect(refusal(['--egress-selector-config-file=/nonexistent']).message).toBe(
      "error: --egress-selector-config-file: ENOENT: no such file or directory, open '/nonexistent'",
    );
  });

  // exitOnFlagError turns commander's own refusals into exit 2 as well.
  it('refuses values that do not parse as the flag type', () => {
    expect(refusal(['--apiserver-count=two']).code).toBe('commander.invalidArgument');
    expect(refusal(['--allow-privileged=maybe']).code).toBe('commander.invalidArgument');
  });
});
