import { InvalidArgumentError, Option, type Command } from 'commander';
import type { Taint } from '@svc/api';
import { intArg, splitList } from '@svc/component-base';
import { validateDnsSubdomain, validateLabels } from '@svc/machinery';
import { parseQuantity } from '../quantity.js';

/** `--simulate-nodes` and the flags that shape the simulated nodes. */
export interface SimulatedNodesOptions {
  /** How many nodes (`--simulate-nodes`); named `<prefix><index>`, the index from 1, zero-padded to 4 digits. */
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

function countArg(v: string): number {
  const n = intArg(v);
  if (n < 0 || n > 100_000) throw new InvalidArgumentError('must be between 0 and 100000');
  return n;
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
  const [e] = validateLabels(labels, 'labels');
  if (e) throw new InvalidArgumentError(`invalid label: ${e.detail ?? ''}`);
  return labels;
}

function capacityArg(v: string, prev: Record<string, string> | undefined): Record<string, string> {
  const capacity = { ...prev, ...pairs(v) };
  for (const [name, q] of Object.entries(capacity)) {
    let n: number;
    try {
      n = parseQuantity(q);
    } catch (e) {
      throw new InvalidArgumentError(`${name}: ${(e as Error).message}`);
    }
    if (n < 0) throw new InvalidArgumentError(`${name}: must not be negative: ${JSON.stringify(q)}`);
    if (name === 'pods' && !Number.isInteger(n)) throw new InvalidArgumentError(`pods: must be a whole number`);
  }
  return capacity;
}

function taintsArg(v: string, prev: Taint[] | undefined): Taint[] {
  const out = [...(prev ?? [])];
  for (const t of splitList(v)) {
    const m = /^([^=:]+)(?:=([^:]*))?:(NoSchedule|PreferNoSchedule|NoExecute)$/.exec(t);
    if (!m) throw new InvalidArgumentError(`invalid taint spec: ${t}, expect <key>=<value>:<effect>`);
    const key = m[1] ?? '';
    const [e] = validateLabels(m[2] === undefined ? { [key]: '' } : { [key]: m[2] }, 'taints');
    if (e) throw new InvalidArgumentError(`invalid taint ${t}: ${e.detail ?? ''}`);
    out.push(
      m[2] === undefined
        ? { key, effect: m[3] as Taint['effect'] }
        : { key, value: m[2], effect: m[3] as Taint['effect'] },
    );
  }
  return out;
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
  return cmd;
}

/**
 * The simulator's options from the parsed flags; undefined without `--simulate-nodes` (or 0).
 * `fail` ends parsing with a flag error (exit 2).
 */
export function simulatedNodesOptions(
  o: Record<string, unknown>,
  { maxPods, svcconfig, fail }: { maxPods: number; svcconfig: boolean; fail: (msg: string) => never },
): SimulatedNodesOptions | undefined {
  const count = (o.simulateNodes as number | undefined) ?? 0;
  const shaping = ['simulatedNodeNamePrefix', 'simulatedNodeLabels', 'simulatedNodeTaints', 'simulatedNodeCapacity'];
  if (count === 0) {
    const stray = shaping.find((k) => o[k] !== undefined);
    if (stray)
      fail(`--${stray.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)} needs --simulate-nodes with a count above 0`);
    return undefined;
  }
  if (!svcconfig) fail('--simulate-nodes needs --svcconfig (the simulated nodes register through the API)');
  const namePrefix = (o.simulatedNodeNamePrefix as string | undefined) ?? DEFAULT_PREFIX;
  const last = `${namePrefix}${String(count).padStart(4, '0')}`;
  const [e] = validateDnsSubdomain(last, 'name');
  if (e) fail(`--simulated-node-name-prefix: ${JSON.stringify(last)} is not a valid node name: ${e.detail ?? ''}`);
  return {
    count,
    namePrefix,
    labels: (o.simulatedNodeLabels as Record<string, string> | undefined) ?? {},
    taints: (o.simulatedNodeTaints as Taint[] | undefined) ?? [],
    capacity: {
      ...DEFAULT_SIMULATED_CAPACITY,
      pods: String(maxPods),
      ...(o.simulatedNodeCapacity as Record<string, string> | undefined),
    },
  };
}

/** The name of simulated node `index` (from 1). */
export function simulatedNodeName(prefix: string, index: number): string {
  return `${prefix}${String(index).padStart(4, '0')}`;
}
