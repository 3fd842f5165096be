import { readFileSync, readdirSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import YAML from 'yaml';
import { naming, nodeAgentConfigType, type Taint } from '@svc/api';
import { parseDuration } from '@svc/machinery';
import { parseQuantity } from './quantity.js';

/**
 * The svclet's configuration: Kubernetes' KubeletConfiguration (v1beta1) with its field names,
 * `kube` spelled with the product token (`svcAPIQPS`, `svcReserved`). Durations are
 * milliseconds here and Go duration strings (`1m0s`) in the file.
 */
export interface SvcletConfiguration {
  enableServer: boolean;
  staticPodPath: string;
  podLogsDir: string;
  syncFrequency: number;
  fileCheckFrequency: number;
  httpCheckFrequency: number;
  staticPodURL: string;
  staticPodURLHeader: Record<string, string[]>;
  address: string;
  port: number;
  tlsCertFile: string;
  tlsPrivateKeyFile: string;
  rotateCertificates: boolean;
  authentication: {
    x509: { clientCAFile: string };
    webhook: { enabled: boolean; cacheTTL: number };
    anonymous: { enabled: boolean };
  };
  authorization: {
    mode: string;
    webhook: { cacheAuthorizedTTL: number; cacheUnauthorizedTTL: number };
  };
  eventRecordQPS: number;
  eventBurst: number;
  enableDebuggingHandlers: boolean;
  healthzPort: number;
  healthzBindAddress: string;
  clusterDomain: string;
  clusterDNS: string[];
  nodeStatusUpdateFrequency: number;
  nodeStatusReportFrequency: number;
  nodeLeaseDurationSeconds: number;
  imageGCHighThresholdPercent: number;
  imageGCLowThresholdPercent: number;
  cgroupsPerQOS: boolean;
  cgroupDriver: string;
  cpuManagerPolicy: string;
  cpuManagerReconcilePeriod: number;
  hairpinMode: string;
  maxPods: number;
  cpuCFSQuota: boolean;
  cpuCFSQuotaPeriod: number;
  maxOpenFiles: number;
  contentType: string;
  svcAPIQPS: number;
  svcAPIBurst: number;
  evictionHard: Record<string, string>;
  evictionPressureTransitionPeriod: number;
  enableControllerAttachDetach: boolean;
  makeIPTablesUtilChains: boolean;
  featureGates: Record<string, boolean>;
  failSwapOn: boolean;
  containerLogMaxSize: string;
  containerLogMaxFiles: number;
  systemReserved: Record<string, string>;
  svcReserved: Record<string, string>;
  enforceNodeAllocatable: string[];
  localStorageCapacityIsolation: boolean;
  containerRuntimeEndpoint: string;
  registerNode: boolean;
  registerWithTaints: Taint[];
  providerID: string;
  logging: { format: string; flushFrequency: number; verbosity: number };
}

/** Where the svc-runtime CRI server listens by default (Kubernetes defaults to containerd's socket). */
export const DEFAULT_RUNTIME_ENDPOINT = 'unix:///run/svc-runtime/svc-runtime.sock';

/** Kubernetes' defaults (the spec's flag table where it gives one). */
export function defaultConfiguration(): SvcletConfiguration {
  return {
    enableServer: true,
    staticPodPath: '',
    podLogsDir: '/var/log/pods',
    syncFrequency: 60_000,
    fileCheckFrequency: 20_000,
    httpCheckFrequency: 20_000,
    staticPodURL: '',
    staticPodURLHeader: {},
    address: '0.0.0.0',
    port: 10250,
    tlsCertFile: '',
    tlsPrivateKeyFile: '',
    // Kubernetes' default is false; the issue asks for rotation whenever a client certificate is used.
    rotateCertificates: true,
    authentication: {
      x509: { clientCAFile: '' },
      webhook: { enabled: false, cacheTTL: 120_000 },
      anonymous: { enabled: true },
    },
    authorization: { mode: 'AlwaysAllow', webhook: { cacheAuthorizedTTL: 300_000, cacheUnauthorizedTTL: 30_000 } },
    eventRecordQPS: 50,
    eventBurst: 100,
    enableDebuggingHandlers: true,
    healthzPort: 10248,
    healthzBindAddress: '127.0.0.1',
    clusterDomain: '',
    clusterDNS: [],
    nodeStatusUpdateFrequency: 10_000,
    nodeStatusReportFrequency: 300_000,
    nodeLeaseDurationSeconds: 40,
    imageGCHighThresholdPercent: 85,
    imageGCLowThresholdPercent: 80,
    cgroupsPerQOS: true,
    cgroupDriver: 'cgroupfs',
    cpuManagerPolicy: 'none',
    cpuManagerReconcilePeriod: 10_000,
    hairpinMode: 'promiscuous-bridge',
    maxPods: 110,
    cpuCFSQuota: true,
    cpuCFSQuotaPeriod: 100,
    maxOpenFiles: 1_000_000,
    contentType: naming().protobufMediaType,
    svcAPIQPS: 50,
    svcAPIBurst: 100,
    evictionHard: {
      'memory.available': '100Mi',
      'nodefs.available': '10%',
      'nodefs.inodesFree': '5%',
      'imagefs.available': '15%',
    },
    evictionPressureTransitionPeriod: 300_000,
    enableControllerAttachDetach: true,
    makeIPTablesUtilChains: true,
    featureGates: {},
    failSwapOn: true,
    containerLogMaxSize: '10Mi',
    containerLogMaxFiles: 5,
    systemReserved: {},
    svcReserved: {},
    enforceNodeAllocatable: ['pods'],
    localStorageCapacityIsolation: true,
    containerRuntimeEndpoint: DEFAULT_RUNTIME_ENDPOINT,
    registerNode: true,
    registerWithTaints: [],
    providerID: '',
    logging: { format: 'text', flushFrequency: 5000, verbosity: 0 },
  };
}

/** How a field is written in the file; `path` is a file or directory relative to the file's directory. */
type Leaf =
  | 'string'
  | 'path'
  | 'bool'
  | 'int'
  | 'float'
  | 'duration'
  | 'strings'
  | 'stringMap'
  | 'boolMap'
  | 'headers'
  | 'taints';
interface Fields {
  [name: string]: Leaf | Fields;
}

const SCHEMA: Fields = {
  enableServer: 'bool',
  staticPodPath: 'path',
  podLogsDir: 'path',
  syncFrequency: 'duration',
  fileCheckFrequency: 'duration',
  httpCheckFrequency: 'duration',
  staticPodURL: 'string',
  staticPodURLHeader: 'headers',
  address: 'string',
  port: 'int',
  tlsCertFile: 'path',
  tlsPrivateKeyFile: 'path',
  rotateCertificates: 'bool',
  authentication: {
    x509: { clientCAFile: 'path' },
    webhook: { enabled: 'bool', cacheTTL: 'duration' },
    anonymous: { enabled: 'bool' },
  },
  authorization: { mode: 'string', webhook: { cacheAuthorizedTTL: 'duration', cacheUnauthorizedTTL: 'duration' } },
  eventRecordQPS: 'int',
  eventBurst: 'int',
  enableDebuggingHandlers: 'bool',
  healthzPort: 'int',
  healthzBindAddress: 'string',
  clusterDomain: 'string',
  clusterDNS: 'strings',
  nodeStatusUpdateFrequency: 'duration',
  nodeStatusReportFrequency: 'duration',
  nodeLeaseDurationSeconds: 'int',
  imageGCHighThresholdPercent: 'int',
  imageGCLowThresholdPercent: 'int',
  cgroupsPerQOS: 'bool',
  cgroupDriver: 'string',
  cpuManagerPolicy: 'string',
  cpuManagerReconcilePeriod: 'duration',
  hairpinMode: 'string',
  maxPods: 'int',
  cpuCFSQuota: 'bool',
  cpuCFSQuotaPeriod: 'duration',
  maxOpenFiles: 'int',
  contentType: 'string',
  svcAPIQPS: 'float',
  svcAPIBurst: 'int',
  evictionHard: 'stringMap',
  evictionPressureTransitionPeriod: 'duration',
  enableControllerAttachDetach: 'bool',
  makeIPTablesUtilChains: 'bool',
  featureGates: 'boolMap',
  failSwapOn: 'bool',
  containerLogMaxSize: 'string',
  containerLogMaxFiles: 'int',
  systemReserved: 'stringMap',
  svcReserved: 'stringMap',
  enforceNodeAllocatable: 'strings',
  localStorageCapacityIsolation: 'bool',
  containerRuntimeEndpoint: 'string',
  registerNode: 'bool',
  registerWithTaints: 'taints',
  providerID: 'string',
  logging: { format: 'string', flushFrequency: 'duration', verbosity: 'int' },
};

/** A configuration as one file (or the command line) gives it: any subset of the fields. */
export type PartialConfiguration = Record<string, unknown>;

export class ConfigurationError extends Error {}

const typeOf = (v: unknown): string => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);

/** A field's value from the file, converted (durations to ms, paths resolved); throws why not. */
function decodeLeaf(leaf: Leaf, v: unknown, baseDir: string): unknown {
  const want = (what: string, got: unknown = v): never => {
    throw new Error(`expected ${what}, got ${typeOf(got)}`);
  };
  const map = <T>(what: string, ok: (x: unknown) => x is T): Record<string, T> => {
    if (typeOf(v) !== 'object') return want(`a map of ${what}s`);
    return Object.fromEntries(
      Object.entries(v as object).map(([k, x]) => [
        k,
        ok(x) ? x : want(`${/^[aeiou]/.test(what) ? 'an' : 'a'} ${what} for key ${JSON.stringify(k)}`, x),
      ]),
    );
  };
  const isString = (x: unknown): x is string => typeof x === 'string';
  const isStrings = (x: unknown): x is string[] => Array.isArray(x) && x.every(isString);
  switch (leaf) {
    case 'string':
      return isString(v) ? v : want('a string');
    case 'path':
      return isString(v) ? (v === '' || isAbsolute(v) ? v : resolve(baseDir, v)) : want('a string');
    case 'bool':
      return typeof v === 'boolean' ? v : want('a boolean');
    case 'int':
      return typeof v === 'number' && Number.isInteger(v) ? v : want('an integer');
    case 'float':
      return typeof v === 'number' ? v : want('a number');
    case 'duration':
      return isString(v) ? parseDuration(v) : want('a duration string such as "1m0s"');
    case 'strings':
      return isStrings(v) ? v : want('a list of strings');
    case 'stringMap':
      return map('string', isString);
    case 'boolMap':
      return map('boolean', (x): x is boolean => typeof x === 'boolean');
    case 'headers':
      return map('list of string', isStrings);
    case 'taints':
      if (!Array.isArray(v)) return want('a list of taints');
      return v.map((t: unknown) => {
        if (typeOf(t) !== 'object') return want('a taint', t);
        const { key, value, effect, ...rest } = t as Record<string, unknown>;
        const unknown = Object.keys(rest)[0];
        if (unknown !== undefined) throw new Error(`unknown field ${JSON.stringify(unknown)} in a taint`);
        if (!isString(key) || !isString(effect) || (value !== undefined && !isString(value)))
          throw new Error('a taint needs a string key and effect (and value)');
        return value === undefined ? { key, effect } : { key, value, effect };
      });
  }
}

/** `raw` against `fields`; `prefix` is the dotted path of `raw` in the file (for messages). */
function decodeFields(
  raw: Record<string, unknown>,
  fields: Fields,
  { prefix, baseDir }: { prefix: string; baseDir: string },
): PartialConfiguration {
  const out: PartialConfiguration = {};
  for (const [k, v] of Object.entries(raw)) {
    const name = prefix + k;
    const f = fields[k];
    if (f === undefined) throw new Error(`strict decoding error: unknown field ${JSON.stringify(name)}`);
    if (typeof f === 'object') {
      if (typeof v !== 'object' || v === null || Array.isArray(v))
        throw new Error(`field ${JSON.stringify(name)}: expected an object`);
      out[k] = decodeFields(v as Record<string, unknown>, f, { prefix: `${name}.`, baseDir });
    } else if (v !== null) {
      try {
        out[k] = decodeLeaf(f, v, baseDir);
      } catch (e) {
        throw new Error(`field ${JSON.stringify(name)}: ${(e as Error).message}`, { cause: e });
      }
    }
  }
  return out;
}

/**
 * One configuration file (YAML or JSON): it must name this `apiVersion` and `kind`; unknown
 * fields, wrong types and bad durations are errors; relative paths in it are resolved against
 * the file's directory (as Kubernetes does).
 */
export function loadConfigurationFile(file: string): PartialConfiguration {
  const fail = (msg: string): never => {
    throw new ConfigurationError(`failed to load ${naming().nodeAgentName} config file ${file}: ${msg}`);
  };
  let doc: unknown;
  try {
    doc = YAML.parse(readFileSync(file, 'utf8'), { uniqueKeys: true });
  } catch (e) {
    return fail((e as Error).message.split('\n')[0] ?? '');
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) return fail('the file is not an object');
  const { apiVersion, kind, ...rest } = doc as Record<string, unknown>;
  const want = nodeAgentConfigType();
  if (apiVersion !== want.apiVersion || kind !== want.kind) {
    fail(
      `expected apiVersion ${JSON.stringify(want.apiVersion)} and kind ${JSON.stringify(want.kind)}, got ${JSON.stringify(apiVersion ?? '')} and ${JSON.stringify(kind ?? '')}`,
    );
  }
  try {
    return decodeFields(rest, SCHEMA, { prefix: '', baseDir: dirname(resolve(file)) });
  } catch (e) {
    return fail((e as Error).message);
  }
}

/** The drop-ins of `--config-dir`: every `*.conf` file, in lexical order of their names. */
export function loadDropIns(dir: string): PartialConfiguration[] {
  let names: string[];
  try {
    names = readdirSync(dir, { withFileTypes: true })
      .filter((e) => e.isFile() && e.name.endsWith('.conf'))
      .map((e) => e.name)
      .sort();
  } catch (e) {
    throw new ConfigurationError(`--config-dir: ${(e as Error).message}`);
  }
  return names.map((n) => loadConfigurationFile(join(dir, n)));
}

/**
 * `over` laid on `base`: the fixed objects (`authentication`, `logging`...) field by field,
 * `featureGates` key by key; any other value (maps included) replaces the earlier one whole.
 */
export function overlay<T extends object>(base: T, over: PartialConfiguration, fields: Fields = SCHEMA): T {
  const out = { ...base } as Record<string, unknown>;
  for (const [k, v] of Object.entries(over)) {
    const f = fields[k];
    if (typeof f === 'object') out[k] = overlay(out[k] as object, v as PartialConfiguration, f);
    else if (f === 'boolMap') out[k] = { ...(out[k] as object), ...(v as object) };
    else out[k] = v;
  }
  return out as T;
}

/** Sets one field of a partial configuration by its dotted path (`authentication.webhook.enabled`). */
export function setField(p: PartialConfiguration, path: string, value: unknown): void {
  const parts = path.split('.');
  let at = p;
  for (const part of parts.slice(0, -1)) {
    at[part] ??= {};
    at = at[part] as PartialConfiguration;
  }
  at[parts[parts.length - 1] ?? ''] = value;
}

const EVICTION_SIGNALS = new Set([
  'memory.available',
  'nodefs.available',
  'nodefs.inodesFree',
  'imagefs.available',
  'imagefs.inodesFree',
  'containerfs.available',
  'containerfs.inodesFree',
  'pid.available',
]);

/** Kubernetes' ValidateKubeletConfiguration, for the fields we read: every problem, one per line. */
export function validateConfiguration(c: SvcletConfiguration): string[] {
  const errs: string[] = [];
  const check = (ok: boolean, msg: string): void => {
    if (!ok) errs.push(msg);
  };
  const port = (v: number, name: string, zeroOk: boolean): void =>
    check(
      Number.isInteger(v) && v >= (zeroOk ? 0 : 1) && v <= 65535,
      `invalid configuration: ${name} (--${name === 'port' ? 'port' : 'healthz-port'}) ${v} must be between ${zeroOk ? 0 : 1} and 65535, inclusive`,
    );
  port(c.port, 'port', false);
  port(c.healthzPort, 'healthzPort', true);
  check(
    c.containerLogMaxFiles >= 2,
    `invalid configuration: containerLogMaxFiles (--container-log-max-files) ${c.containerLogMaxFiles} must be at least 2`,
  );
  try {
    check(parseQuantity(c.containerLogMaxSize) >= 0, 'invalid configuration: containerLogMaxSize must not be negative');
  } catch (e) {
    errs.push(`invalid configuration: containerLogMaxSize (--container-log-max-size): ${(e as Error).message}`);
  }
  check(
    c.imageGCHighThresholdPercent >= 0 && c.imageGCHighThresholdPercent <= 100,
    `invalid configuration: imageGCHighThresholdPercent (--image-gc-high-threshold) ${c.imageGCHighThresholdPercent} must be between 0 and 100, inclusive`,
  );
  check(
    c.imageGCLowThresholdPercent >= 0 && c.imageGCLowThresholdPercent <= 100,
    `invalid configuration: imageGCLowThresholdPercent (--image-gc-low-threshold) ${c.imageGCLowThresholdPercent} must be between 0 and 100, inclusive`,
  );
  check(
    c.imageGCLowThresholdPercent <= c.imageGCHighThresholdPercent,
    `invalid configuration: imageGCLowThresholdPercent (--image-gc-low-threshold) ${c.imageGCLowThresholdPercent} must be less than imageGCHighThresholdPercent (--image-gc-high-threshold) ${c.imageGCHighThresholdPercent}`,
  );
  check(
    c.nodeLeaseDurationSeconds > 0,
    `invalid configuration: nodeLeaseDurationSeconds ${c.nodeLeaseDurationSeconds} must be greater than 0`,
  );
  check(
    c.nodeStatusUpdateFrequency > 0,
    'invalid configuration: nodeStatusUpdateFrequency (--node-status-update-frequency) must be greater than 0',
  );
  check(c.nodeStatusReportFrequency > 0, 'invalid configuration: nodeStatusReportFrequency must be greater than 0');
  check(c.syncFrequency > 0, 'invalid configuration: syncFrequency (--sync-frequency) must be greater than 0');
  check(
    c.fileCheckFrequency > 0,
    'invalid configuration: fileCheckFrequency (--file-check-frequency) must be greater than 0',
  );
  check(
    c.httpCheckFrequency > 0,
    'invalid configuration: httpCheckFrequency (--http-check-frequency) must be greater than 0',
  );
  check(c.maxPods >= 0, 'invalid configuration: maxPods (--max-pods) must not be negative');
  check(c.svcAPIQPS >= 0, 'invalid configuration: svcAPIQPS (--svc-api-qps) must not be negative');
  check(c.svcAPIBurst >= 0, 'invalid configuration: svcAPIBurst (--svc-api-burst) must not be negative');
  check(
    c.eventRecordQPS >= 0 && c.eventBurst >= 0,
    'invalid configuration: eventRecordQPS and eventBurst must not be negative',
  );
  check(
    ['AlwaysAllow', 'Webhook'].includes(c.authorization.mode),
    `invalid configuration: authorization.mode (--authorization-mode) ${JSON.stringify(c.authorization.mode)} must be AlwaysAllow or Webhook`,
  );
  check(
    ['cgroupfs', 'systemd'].includes(c.cgroupDriver),
    `invalid configuration: cgroupDriver (--cgroup-driver) ${JSON.stringify(c.cgroupDriver)} must be cgroupfs or systemd`,
  );
  check(
    ['none', 'static'].includes(c.cpuManagerPolicy),
    `invalid configuration: cpuManagerPolicy (--cpu-manager-policy) ${JSON.stringify(c.cpuManagerPolicy)} must be none or static`,
  );
  check(
    ['promiscuous-bridge', 'hairpin-veth', 'none'].includes(c.hairpinMode),
    `invalid configuration: hairpinMode (--hairpin-mode) ${JSON.stringify(c.hairpinMode)} must be promiscuous-bridge, hairpin-veth or none`,
  );
  check(
    ['text', 'json'].includes(c.logging.format),
    `invalid configuration: logging.format (--logging-format) ${JSON.stringify(c.logging.format)} must be text or json`,
  );
  for (const e of c.enforceNodeAllocatable) {
    check(
      ['none', 'pods', 'system-reserved', 'svc-reserved'].includes(e),
      `invalid configuration: option ${JSON.stringify(e)} specified for enforceNodeAllocatable (--enforce-node-allocatable); valid options are "pods", "system-reserved", "svc-reserved" or "none"`,
    );
  }
  check(
    !c.enforceNodeAllocatable.includes('none') || c.enforceNodeAllocatable.length === 1,
    'invalid configuration: enforceNodeAllocatable (--enforce-node-allocatable) may not contain additional enforcements when "none" is specified',
  );
  for (const [k, v] of Object.entries(c.evictionHard)) {
    check(EVICTION_SIGNALS.has(k), `invalid configuration: evictionHard: unsupported eviction signal ${k}`);
    if (!v.endsWith('%')) {
      try {
        parseQuantity(v);
      } catch (e) {
        errs.push(`invalid configuration: evictionHard[${k}]: ${(e as Error).message}`);
      }
    }
  }
  for (const [what, m] of [
    ['systemReserved', c.systemReserved],
    ['svcReserved', c.svcReserved],
  ] as const) {
    for (const [k, v] of Object.entries(m)) {
      try {
        parseQuantity(v);
      } catch (e) {
        errs.push(`invalid configuration: ${what}[${k}]: ${(e as Error).message}`);
      }
    }
  }
  for (const t of c.registerWithTaints) {
    check(
      ['NoSchedule', 'PreferNoSchedule', 'NoExecute'].includes(t.effect),
      `invalid configuration: registerWithTaints: unknown taint effect ${JSON.stringify(t.effect)}`,
    );
  }
  check(
    c.tlsCertFile === '' || c.tlsPrivateKeyFile !== '',
    'invalid configuration: tlsCertFile (--tls-cert-file) needs tlsPrivateKeyFile (--tls-private-key-file)',
  );
  return errs;
}
