import { readFileSync } from 'node:fs';
import { InvalidArgumentError, Option, type Command } from 'commander';
import YAML from 'yaml';
import type { Taint } from '@svc/api';
import { intArg, splitList } from '@svc/component-base';
import { validateDnsSubdomain, validateLabels } from '@svc/machinery';
import { parseQuantity } from '../quantity.js';

/** The simulated nodes: the flags' group (`--simulate-nodes` and its shaping flags), then the file's groups. */
export interface SimulatedNodesOptions {
  groups: SimulatedNodeGroup[];
}

/** Nodes of one shape. */
export interface SimulatedNodeGroup {
  /** How many nodes; named `<prefix><index>`, the index from 1, zero-padded to 4 digits. */
  count: number;
  namePrefix: string;
  /** Added to each node's default labels (hostname, os, arch). */
  labels: Record<string, string>;
  /** Registered with each node, as `--register-with-taints` (the not-ready taint is added as for a real node). */
  taints: Taint[];
  /** `status.capacity` of each node; allocatable is capacity less the reservations and hard eviction thresholds. */
  capacity: Record<string, string>;
}

/** The capacity a simulated node reports when `--simulated-node-capacity` does not say (pods: `maxPods`). */
export const DEFAULT_SIMULATED_CAPACITY: Readonly<Record<string, string>> = {
  cpu: '32',
  memory: '256Gi',
  'ephemeral-storage': '1Ti',
};

const DEFAULT_PREFIX = 'sim-node-';

const MAX_NODES = 100_000;

function countArg(v: string): number {
  const n = intArg(v);
  if (n < 0 || n > MAX_NODES) throw new InvalidArgumentError(`must be between 0 and ${MAX_NODES}`);
  return n;
}

/** Throws an Error naming the first invalid label. */
function checkLabels(labels: Record<string, string>): void {
  const [e] = validateLabels(labels, 'labels');
  if (e) throw new Error(`invalid label: ${e.detail ?? ''}`);
}

/** Throws an Error naming the first quantity that does not parse or is negative. */
function checkCapacity(capacity: Record<string, string>): void {
  for (const [name, q] of Object.entries(capacity)) {
    let n: number;
    try {
      n = parseQuantity(String(q));
    } catch (e) {
      throw new Error(`${name}: ${(e as Error).message}`, { cause: e });
    }
    if (n < 0) throw new Error(`${name}: must not be negative: ${JSON.stringify(q)}`);
    if (name === 'pods' && !Number.isInteger(n)) throw new Error(`pods: must be a whole number`);
  }
}

/** `<key>=<value>:<effect>` or `<key>:<effect>`. */
function parseTaint(t: string): Taint {
  const m = /^([^=:]+)(?:=([^:]*))?:(NoSchedule|PreferNoSchedule|NoExecute)$/.exec(t);
  if (!m) throw new Error(`invalid taint spec: ${t}, expect <key>=<value>:<effect>`);
  const key = m[1] ?? '';
  const [e] = validateLabels(m[2] === undefined ? { [key]: '' } : { [key]: m[2] }, 'taints');
  if (e) throw new Error(`invalid taint ${t}: ${e.detail ?? ''}`);
  const effect = m[3] as Taint['effect'];
  return m[2] === undefined ? { key, effect } : { key, value: m[2], effect };
}

/** Runs `check`, turning what it throws into commander's invalid-argument error. */
function asArg<T>(check: () => T): T {
  try {
    return check();
  } catch (e) {
    throw new InvalidArgumentError((e as Error).message);
  }
}

function pairs(v: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of splitList(v)) {
    const i = pair.indexOf('=');
    if (i <= 0) throw new InvalidArgumentError(`malformed pair, expect key=value: ${JSON.stringify(pair)}`);
    out[pair.slice(0, i).trim()] = pair.slice(i + 1).trim();
  }
  return out;
}

function labelsArg(v: string, prev: Record<string, string> | undefined): Record<string, string> {
  const labels = { ...prev, ...pairs(v) };
  asArg(() => checkLabels(labels));
  return labels;
}

function capacityArg(v: string, prev: Record<string, string> | undefined): Record<string, string> {
  const capacity = { ...prev, ...pairs(v) };
  asArg(() => checkCapacity(capacity));
  return capacity;
}

function taintsArg(v: string, prev: Taint[] | undefined): Taint[] {
  return [...(prev ?? []), ...splitList(v).map((t) => asArg(() => parseTaint(t)))];
}

const GROUP = 'Simulated nodes (no processes; see docs/simulated-nodes.md):';

/** Adds the simulator's flags to the svclet's command. */
export function addSimulatedNodeFlags(cmd: Command): Command {
  const add = (o: Option): void => {
    cmd.addOption(o.helpGroup(GROUP));
  };
  add(
    new Option(
      '--simulate-nodes <int>',
      'Run this many simulated nodes instead of one real node: each is registered, heartbeats and takes its pods to Running through the API as a svclet does, but no container runs. Needs --svcconfig with a credential that may write every node (default: 0, off)',
    ).argParser(countArg),
  );
  add(
    new Option(
      '--simulated-node-name-prefix <value>',
      `Names of the simulated nodes: <prefix><index>, the index from 1, zero-padded to 4 digits (default: ${DEFAULT_PREFIX})`,
    ),
  );
  add(
    new Option(
      '--simulated-node-labels <pairs>',
      'Labels of every simulated node (comma-separated key=value pairs), besides the hostname, os and arch labels.',
    ).argParser(labelsArg),
  );
  add(
    new Option(
      '--simulated-node-taints <taints>',
      'Taints every simulated node registers with (comma separated <key>=<value>:<effect>).',
    ).argParser(taintsArg),
  );
  add(
    new Option(
      '--simulated-node-capacity <pairs>',
      `Capacity of every simulated node (comma-separated resource=quantity pairs; unnamed resources keep their default) (default: ${Object.entries(
        DEFAULT_SIMULATED_CAPACITY,
      )
        .map(([k, v]) => `${k}=${v}`)
        .join(',')},pods=<maxPods>)`,
    ).argParser(capacityArg),
  );
  add(
    new Option(
      '--simulated-nodes-file <path>',
      'YAML or JSON file of more simulated nodes, in groups of one shape: {groups: [{count, namePrefix, labels, taints, capacity}]} (taints as <key>=<value>:<effect> strings); they come after the --simulate-nodes ones.',
    ),
  );
  return cmd;
}

const GROUP_FIELDS = new Set(['count', 'namePrefix', 'labels', 'taints', 'capacity']);

/** Whether `v` is a map of strings (YAML may give numbers: `cpu: 64`, kept as written). */
function stringMap(v: unknown, what: string): Record<string, string> {
  if (v === undefined) return {};
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new Error(`${what}: must be a map`);
  const out: Record<string, string> = {};
  for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
    if (typeof x !== 'string' && typeof x !== 'number') throw new Error(`${what}.${k}: must be a string`);
    out[k] = String(x);
  }
  return out;
}

/** The groups of a `--simulated-nodes-file`; throws an Error saying what is wrong and where. */
function readGroupsFile(file: string, maxPods: number): SimulatedNodeGroup[] {
  let doc: unknown;
  try {
    doc = YAML.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new Error((e as Error).message.split('\n')[0], { cause: e });
  }
  const groups = (doc as { groups?: unknown } | null)?.groups;
  if (!Array.isArray(groups) || groups.length === 0)
    throw new Error('expected {groups: [...]} with at least one group');
  return groups.map((g: unknown, i): SimulatedNodeGroup => {
    const at = `groups[${i}]`;
    if (typeof g !== 'object' || g === null || Array.isArray(g)) throw new Error(`${at}: must be a map`);
    const r = g as Record<string, unknown>;
    const unknown = Object.keys(r).find((k) => !GROUP_FIELDS.has(k));
    if (unknown) throw new Error(`${at}: unknown field ${JSON.stringify(unknown)}`);
    if (typeof r.count !== 'number' || !Number.isInteger(r.count) || r.count < 1 || r.count > MAX_NODES)
      throw new Error(`${at}.count: must be a whole number between 1 and ${MAX_NODES}`);
    if (typeof r.namePrefix !== 'string' || r.namePrefix === '') throw new Error(`${at}.namePrefix: must be given`);
    const labels = stringMap(r.labels, `${at}.labels`);
    const capacity = stringMap(r.capacity, `${at}.capacity`);
    if (r.taints !== undefined && (!Array.isArray(r.taints) || r.taints.some((t) => typeof t !== 'string')))
      throw new Error(`${at}.taints: must be a list of <key>=<value>:<effect> strings`);
    try {
      checkLabels(labels);
      checkCapacity(capacity);
      return {
        count: r.count,
        namePrefix: r.namePrefix,
        labels,
        taints: ((r.taints as string[] | undefined) ?? []).map(parseTaint),
        capacity: { ...DEFAULT_SIMULATED_CAPACITY, pods: String(maxPods), ...capacity },
      };
    } catch (e) {
      throw new Error(`${at}: ${(e as Error).message}`, { cause: e });
    }
  });
}

/**
 * The simulator's options from the parsed flags (and `--simulated-nodes-file`); undefined when
 * neither asks for a node. `fail` ends parsing with a flag error (exit 2).
 */
export function simulatedNodesOptions(
  o: Record<string, unknown>,
  { maxPods, svcconfig, fail }: { maxPods: number; svcconfig: boolean; fail: (msg: string) => never },
): SimulatedNodesOptions | undefined {
  const count = (o.simulateNodes as number | undefined) ?? 0;
  const shaping = ['simulatedNodeNamePrefix', 'simulatedNodeLabels', 'simulatedNodeTaints', 'simulatedNodeCapacity'];
  const file = o.simulatedNodesFile as string | undefined;
  if (count === 0) {
    const stray = shaping.find((k) => o[k] !== undefined);
    if (stray)
      fail(`--${stray.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)} needs --simulate-nodes with a count above 0`);
    if (!file) return undefined;
  }
  const flag = count > 0 ? '--simulate-nodes' : '--simulated-nodes-file';
  if (!svcconfig) fail(`${flag} needs --svcconfig (the simulated nodes register through the API)`);
  const groups: SimulatedNodeGroup[] = [];
  if (count > 0)
    groups.push({
      count,
      namePrefix: (o.simulatedNodeNamePrefix as string | undefined) ?? DEFAULT_PREFIX,
      labels: (o.simulatedNodeLabels as Record<string, string> | undefined) ?? {},
      taints: (o.simulatedNodeTaints as Taint[] | undefined) ?? [],
      capacity: {
        ...DEFAULT_SIMULATED_CAPACITY,
        pods: String(maxPods),
        ...(o.simulatedNodeCapacity as Record<string, string> | undefined),
      },
    });
  if (file) {
    try {
      groups.push(...readGroupsFile(file, maxPods));
    } catch (e) {
      fail(`--simulated-nodes-file: ${file}: ${(e as Error).message}`);
    }
  }
  const total = groups.reduce((n, g) => n + g.count, 0);
  if (total > MAX_NODES) fail(`${flag}: ${total} nodes in all, at most ${MAX_NODES}`);
  const names = new Set<string>();
  for (const [i, g] of groups.entries()) {
    const where =
      file && (count === 0 || i > 0)
        ? `--simulated-nodes-file: ${file}: groups[${count > 0 ? i - 1 : i}]`
        : '--simulated-node-name-prefix';
    const last = simulatedNodeName(g.namePrefix, g.count);
    const [e] = validateDnsSubdomain(last, 'name');
    if (e) fail(`${where}: ${JSON.stringify(last)} is not a valid node name: ${e.detail ?? ''}`);
    for (let k = 1; k <= g.count; k++) {
      const name = simulatedNodeName(g.namePrefix, k);
      if (names.has(name)) fail(`${where}: node name ${JSON.stringify(name)} is also another group's`);
      names.add(name);
    }
  }
  return { groups };
}

/** The name of simulated node `index` (from 1). */
export function simulatedNodeName(prefix: string, index: number): string {
  return `${prefix}${String(index).padStart(4, '0')}`;
}
