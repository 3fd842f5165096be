import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { NAMINGS, isNamingScheme } from '@svc/api';
import { Option, type Command } from 'commander';
import { boolOption, durationOption, intArg } from '@svc/component-base';
import { serviceRangeFlags } from './service-range-flags.js';
import { parseEgressSelectorConfiguration, type EgressSelection } from './egress-selector.js';
import { ENDPOINT_RECONCILER_TYPES, type EndpointReconcilerType } from './server/endpoint-reconciler.js';

/**
 * The API server's control-plane flags beyond serving and security: the `svc` Service and its
 * endpoints, the peer proxy addresses, collection deletes, garbage collection, privileged
 * containers and the egress selector.
 */
export interface ServerFlags {
  /** `--endpoint-reconciler-type`: how this server keeps the `svc` Service's endpoints. */
  endpointReconcilerType: EndpointReconcilerType;
  /** `--apiserver-count` (used by the `master-count` reconciler). */
  apiserverCount: number;
  /** `--svc-service-node-port`: 0 makes the Service ClusterIP, else NodePort on this port. */
  svcServiceNodePort: number;
  /** `--delete-collection-workers`: deletes a DeleteCollection runs at once. */
  deleteCollectionWorkers: number;
  /** `--workers`: server processes sharing `--secure-port` (1: this process serves). */
  workers: number;
  /** `--enable-garbage-collector`: must match the controller manager's flag. */
  enableGarbageCollector: boolean;
  /** `--allow-privileged`: privileged containers are refused when false. */
  allowPrivileged: boolean;
  /** `--egress-selector-config-file`: EgressSelectorConfiguration, read at start. */
  egressSelectorConfigFile?: string;
  /** Its selections (all Direct: the only kind this server makes). */
  egressSelections: EgressSelection[];
  /** `--peer-advertise-ip`, `--peer-advertise-port`, `--peer-ca-file` (gate UnknownVersionInteroperabilityProxy). */
  peerAdvertiseIp?: string;
  peerAdvertisePort?: number;
  peerCaFile?: string;
  /** `--log-flush-frequency`: lines are written as they are logged, so any bound holds. */
  logFlushFrequencyMs: number;
}

export function withServerFlags(cmd: Command): Command {
  return cmd
    .addOption(
      new Option(
        '--endpoint-reconciler-type <type>',
        `Use an endpoint reconciler (${ENDPOINT_RECONCILER_TYPES.join(', ')}); master-count is deprecated, and lease will be used instead.`,
      ).default('lease'),
    )
    .addOption(
      new Option(
        '--apiserver-count <n>',
        'The number of API servers running in the cluster, must be a positive number. (In use when --endpoint-reconciler-type=master-count is enabled.)',
      )
        .default(1)
        .argParser(intArg),
    )
    .addOption(
      new Option(
        '--svc-service-node-port <port>',
        `If non-zero, the API server's own Service (svc in default) is of type NodePort with this node port (inside --service-node-port-range); if zero, it is of type ClusterIP.`,
      )
        .default(0)
        .argParser(intArg),
    )
    .addOption(
      new Option(
        '--delete-collection-workers <n>',
        'Number of workers spawned for DeleteCollection call. These are used to speed up namespace cleanup.',
      )
        .default(1)
        .argParser(intArg),
    )
    .addOption(
      new Option(
        '--workers <n>',
        'Number of API server processes sharing --secure-port, each a whole server with its own etcd clients, watch cache, post-start hooks, priority-and-fairness seats and /metrics, as several API servers behind one address; 1 serves from this process. Above 1, --secure-port must not be 0, --audit-log-path may only be - and --debug-socket-path is not allowed.',
      )
        .default(1)
        .argParser(intArg),
    )
    .addOption(
      boolOption(
        '--enable-garbage-collector',
        'Enables the generic garbage collector. MUST be synced with the corresponding flag of the svc-controller-manager. When false, deletes orphan or delete dependents only as the request asks, never through the collector.',
        true,
      ),
    )
    .addOption(boolOption('--allow-privileged', 'If true, allow privileged containers.', false))
    .addOption(
      new Option(
        '--egress-selector-config-file <file>',
        "File with the API server's egress selector configuration (EgressSelectorConfiguration): how it reaches the cluster, the control plane and etcd. Only Direct connections are possible here.",
      ),
    )
    .addOption(
      new Option(
        '--peer-advertise-ip <ip>',
        'If set and the UnknownVersionInteroperabilityProxy feature gate is enabled, this IP will be used by peer API servers to proxy requests to this server (recorded on its identity Lease).',
      ),
    )
    .addOption(
      new Option(
        '--peer-advertise-port <port>',
        'If set and the UnknownVersionInteroperabilityProxy feature gate is enabled, this port will be used by peer API servers to proxy requests to this server.',
      ).argParser(intArg),
    )
    .addOption(
      durationOption(
        '--log-flush-frequency',
        'Maximum number of seconds between log flushes (this server writes each line as it is logged).',
        5000,
      ),
    )
    .addOption(
      new Option(
        '--peer-ca-file <file>',
        'If set and the UnknownVersionInteroperabilityProxy feature gate is enabled, this file will be used to verify serving certificates of peer API servers.',
      ),
    );
}

/** The flags above, checked (`fail` exits 2 with one line). */
export function serverFlags(
  o: Record<string, unknown>,
  c: { fail: (msg: string) => never; gates: { enabled(name: string): boolean } },
): ServerFlags {
  const { fail } = c;
  const type = String(o.endpointReconcilerType);
  if (!(ENDPOINT_RECONCILER_TYPES as readonly string[]).includes(type))
    fail(
      `--endpoint-reconciler-type: invalid value ${JSON.stringify(type)}: supported values: ${ENDPOINT_RECONCILER_TYPES.join(', ')}`,
    );
  const count = o.apiserverCount as number;
  if (count <= 0) fail(`--apiserver-count: ${count} must be a positive number`);
  const nodePort = o.svcServiceNodePort as number;
  if (nodePort < 0 || nodePort > 65535)
    fail(`--svc-service-node-port: ${nodePort} must be between 0 and 65535, inclusive`);
  const range = serviceRangeFlags(o, { fail }).serviceNodePortRange;
  if (nodePort > 0 && (nodePort < range.min || nodePort > range.max))
    fail(`--svc-service-node-port: ${nodePort} must be inside the node port range ${range.min}-${range.max}`);
  const workers = o.deleteCollectionWorkers as number;
  if (workers < 1) fail(`--delete-collection-workers: ${workers} must be at least 1`);
  const processes = serverProcesses(o, fail);
  const advertise = o.advertiseAddress as string | undefined;
  if (advertise !== undefined && isIP(advertise) === 0)
    fail(`invalid argument ${JSON.stringify(advertise)} for "--advertise-address" flag: failed to parse IP`);
  const peerIp = o.peerAdvertiseIp as string | undefined;
  if (peerIp !== undefined && isIP(peerIp) === 0)
    fail(`--peer-advertise-ip: ${JSON.stringify(peerIp)} is not a valid IP address`);
  const peerPort = o.peerAdvertisePort as number | undefined;
  if (peerPort !== undefined && (peerPort < 1 || peerPort > 65535))
    fail(`--peer-advertise-port: ${peerPort} must be between 1 and 65535, inclusive`);
  // As Kubernetes: the peer flags need the gate of the peer proxy.
  if (!c.gates.enabled('UnknownVersionInteroperabilityProxy'))
    for (const [flag, key] of [
      ['--peer-ca-file', 'peerCaFile'],
      ['--peer-advertise-ip', 'peerAdvertiseIp'],
      ['--peer-advertise-port', 'peerAdvertisePort'],
    ] as const)
      if (o[key] !== undefined) fail(`${flag} requires UnknownVersionInteroperabilityProxy feature to be turned on`);
  const flush = o.logFlushFrequency as number;
  if (flush <= 0) fail(`--log-flush-frequency: ${flush / 1000}s must be greater than 0`);
  const egressFile = o.egressSelectorConfigFile as string | undefined;
  const peerCa = o.peerCaFile as string | undefined;
  if (peerCa !== undefined) readPem('--peer-ca-file', { file: peerCa, fail });
  return {
    endpointReconcilerType: type as EndpointReconcilerType,
    apiserverCount: count,
    svcServiceNodePort: nodePort,
    deleteCollectionWorkers: workers,
    workers: processes,
    enableGarbageCollector: o.enableGarbageCollector as boolean,
    allowPrivileged: o.allowPrivileged as boolean,
    egressSelectorConfigFile: egressFile,
    egressSelections: egress(egressFile, { o, fail }),
    peerAdvertiseIp: peerIp,
    peerAdvertisePort: peerPort,
    peerCaFile: o.peerCaFile as string | undefined,
    logFlushFrequencyMs: flush,
  };
}

/** `--workers`, checked against what several processes cannot share. */
function serverProcesses(o: Record<string, unknown>, fail: (msg: string) => never): number {
  const n = o.workers as number;
  if (n < 1 || n > MAX_WORKERS) fail(`--workers: ${n} must be between 1 and ${MAX_WORKERS}, inclusive`);
  if (n === 1) return n;
  if (o.securePort === 0) fail('--workers: several processes cannot share --secure-port 0 (a port chosen by each)');
  const audit = o.auditLogPath as string | undefined;
  if (audit !== undefined && audit !== '-')
    fail('--workers: several processes cannot rotate one --audit-log-path file; use - or an audit webhook');
  if (o.debugSocketPath !== undefined) fail('--workers: several processes cannot listen on one --debug-socket-path');
  return n;
}

/** The most `--workers` (one machine's cores, with room). */
const MAX_WORKERS = 64;

/** `--egress-selector-config-file` read and checked now (a bad file exits 2 naming it). */
function egress(
  file: string | undefined,
  c: { o: Record<string, unknown>; fail: (msg: string) => never },
): EgressSelection[] {
  if (file === undefined) return [];
  const scheme = String(c.o.naming);
  const suffix = isNamingScheme(scheme) ? NAMINGS[scheme].groupSuffix : NAMINGS.svc.groupSuffix;
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    return c.fail(`--egress-selector-config-file: ${(e as Error).message}`);
  }
  try {
    return parseEgressSelectorConfiguration(text, suffix);
  } catch (e) {
    return c.fail(`--egress-selector-config-file: ${file}: ${(e as Error).message}`);
  }
}

/** A file of PEM certificates, read now (a bad one exits 2 naming the flag). */
function readPem(flag: string, c: { file: string; fail: (msg: string) => never }): string {
  let text: string;
  try {
    text = readFileSync(c.file, 'utf8');
  } catch (e) {
    return c.fail(`${flag}: ${(e as Error).message}`);
  }
  if (!text.includes('-----BEGIN CERTIFICATE-----')) c.fail(`${flag}: ${c.file}: no PEM certificate found`);
  return text;
}
