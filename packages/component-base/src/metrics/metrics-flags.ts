import { readFileSync } from 'node:fs';
import { Option, type Command } from 'commander';
import { listOption, type ParsedFlags } from '../flags.js';
import type { MetricsPolicy } from './component-registry.js';
import { CURRENT_RELEASE } from './component-registry.js';
import { parseMajorMinor } from './stability.js';

// Kubernetes' component-base metrics options (`--disabled-metrics`, `--show-hidden-metrics-for-version`,
// `--allow-metric-labels`, `--allow-metric-labels-manifest`), shared by every binary serving /metrics.

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

/** The previous minor release: the only value `--show-hidden-metrics-for-version` accepts. */
export function previousRelease(current = CURRENT_RELEASE): string {
  const [major, minor] = parseMajorMinor(current);
  return `${major}.${minor - 1}`;
}

/**
 * pflag's stringToString: one `=` makes the whole value one pair (quotes trimmed); more are read
 * as one CSV record of `key=value` fields. Later uses of the flag add to the map.
 */
export function parseStringToString(value: string, prev: Record<string, string> = {}): Record<string, string> {
  const fields = (value.match(/=/g) ?? []).length <= 1 ? [value.replace(/^"+|"+$/g, '')] : parseCsvRecord(value);
  const out = { ...prev };
  for (const pair of fields) {
    const eq = pair.indexOf('=');
    if (eq < 0) throw new Error(`${pair} must be formatted as key=value`);
    out[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  return out;
}

/** One record of RFC 4180 CSV (Go's encoding/csv): fields split on commas, double quotes group. */
function parseCsvRecord(line: string): string[] {
  const fields: string[] = [];
  let i = 0;
  for (;;) {
    let field = '';
    if (line[i] === '"') {
      i++;
      for (;;) {
        if (i >= line.length) throw new Error(`parse error: extraneous or missing " in quoted-field`);
        if (line[i] === '"') {
          if (line[i + 1] === '"') {
            field += '"';
            i += 2;
            continue;
          }
          i++;
          break;
        }
        field += line[i++];
      }
      if (i < line.length && line[i] !== ',') throw new Error(`parse error: extraneous or missing " in quoted-field`);
    } else {
      while (i < line.length && line[i] !== ',') {
        if (line[i] === '"') throw new Error(`parse error: bare " in non-quoted-field`);
        field += line[i++];
      }
    }
    fields.push(field);
    if (i >= line.length) return fields;
    i++; // the comma
  }
}

function unquote(s: string): string {
  const t = s.trim();
  if (t.length >= 2 && t.startsWith('"') && t.endsWith('"')) return JSON.parse(t) as string;
  if (t.length >= 2 && t.startsWith("'") && t.endsWith("'")) return t.slice(1, -1).replace(/''/g, "'");
  return t;
}

/**
 * The manifest's shape: a flat YAML map of strings (`"metric,label": "v1,v2"` per line, `#`
 * comments) or the same as a JSON object. Nested YAML is refused.
 */
export function parseFlatYamlMap(text: string): Record<string, unknown> {
  const trimmed = text.trim();
  if (trimmed.startsWith('{')) return JSON.parse(trimmed) as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.replace(/^\s+|\s+$/g, '');
    if (line === '' || line.startsWith('#') || line === '---') return;
    const m = /^("(?:[^"\\]|\\.)*"|'(?:[^']|'')*'|[^:#]+?)\s*:\s+(.*)$/.exec(line) ?? /^(.+?):$/.exec(line);
    if (!m || m[2] === undefined || m[2] === '')
      throw new Error(`line ${i + 1}: expected "<MetricName>,<LabelName>": "<values>"`);
    out[unquote(m[1] ?? '')] = unquote(m[2].replace(/\s+#.*$/, ''));
  });
  return out;
}

function stringToStringArg(v: string, prev: Record<string, string> | undefined): Record<string, string> {
  return parseStringToString(v, prev ?? {});
}

/** Adds the four metrics flags (Kubernetes' help texts in our words). */
export function withMetricsFlags(cmd: Command): Command {
  return cmd
    .addOption(
      listOption(
        '--disabled-metrics <names>',
        'This flag provides an escape hatch for misbehaving metrics. You must provide the fully qualified metric name in order to disable it. Disabling metrics is higher in precedence than showing hidden metrics.',
        [],
      ),
    )
    .addOption(
      new Option(
        '--show-hidden-metrics-for-version <version>',
        `The previous version for which you want to show hidden metrics. Only the previous minor version is meaningful, other values will not be allowed. The format is <major>.<minor>, e.g.: '${previousRelease()}'. The purpose of this format is make sure you have the opportunity to notice if the next release hides additional metrics, rather than being surprised when they are permanently removed in the release after that.`,
      ),
    )
    .addOption(
      new Option(
        '--allow-metric-labels <mapping>',
        "The map from metric-label to value allow-list of this label. The key's format is <MetricName>,<LabelName>. The value's format is <allowed_value>,<allowed_value>...e.g. metric1,label1='v1,v2,v3', metric1,label2='v1,v2,v3' metric2,label1='v1,v2,v3'.",
      )
        .default({}, '[]')
        .argParser(stringToStringArg),
    )
    .addOption(
      new Option(
        '--allow-metric-labels-manifest <file>',
        'The path to the manifest file that contains the allow-list mapping. The format of the file is the same as the flag --allow-metric-labels. Note that the flag --allow-metric-labels will override the manifest file.',
      ),
    );
}

function validateAllowListKey(key: string): string | undefined {
  const parts = key.split(',');
  if (parts.length !== 2 || !METRIC_NAME.test(parts[0] ?? '') || !LABEL_NAME.test(parts[1] ?? ''))
    return `--allow-metric-labels must have a list of kv pair with format \`metricName,labelName=labelValue, labelValue,...\`: ${JSON.stringify(key)} is not <MetricName>,<LabelName>`;
  return undefined;
}

function toAllowList(mapping: Record<string, string>): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [k, v] of Object.entries(mapping)) out[k] = v.split(',').map((x) => x.trim());
  return out;
}

/** Reads and validates the flags of `withMetricsFlags` (bad values end parsing: exit 2). */
export function metricsPolicy(p: ParsedFlags): MetricsPolicy {
  const { o, fail, givenOnCli } = p;
  const disabled = o.disabledMetrics as string[];
  for (const name of disabled)
    if (!METRIC_NAME.test(name)) fail(`--disabled-metrics: ${JSON.stringify(name)} is not a valid metric name`);
  const show = o.showHiddenMetricsForVersion as string | undefined;
  if (show !== undefined && show !== '') {
    const allowed = previousRelease();
    let ok: boolean;
    try {
      const [major, minor] = parseMajorMinor(show);
      ok = `${major}.${minor}` === allowed;
    } catch {
      ok = false;
    }
    if (!ok)
      fail(
        `--show-hidden-metrics-for-version must be omitted or have the value '${allowed}'. Only the previous minor version is allowed (got ${JSON.stringify(show)})`,
      );
  }
  let mapping: Record<string, string> | undefined;
  if (givenOnCli('allowMetricLabels')) {
    mapping = o.allowMetricLabels as Record<string, string>;
  } else if (typeof o.allowMetricLabelsManifest === 'string' && o.allowMetricLabelsManifest !== '') {
    const file = o.allowMetricLabelsManifest;
    let doc: unknown;
    try {
      doc = parseFlatYamlMap(readFileSync(file, 'utf8'));
    } catch (e) {
      fail(`--allow-metric-labels-manifest: ${file}: ${(e as Error).message.split('\n')[0]}`);
    }
    if (doc === null || doc === undefined) doc = {};
    if (typeof doc !== 'object' || Array.isArray(doc))
      fail(`--allow-metric-labels-manifest: ${file}: not a map of "<MetricName>,<LabelName>" to allowed values`);
    mapping = {};
    for (const [k, v] of Object.entries(doc as Record<string, unknown>)) {
      if (typeof v !== 'string')
        return fail(`--allow-metric-labels-manifest: ${file}: the value of ${JSON.stringify(k)} is not a string`);
      mapping[k] = v;
    }
  }
  for (const key of Object.keys(mapping ?? {})) {
    const err = validateAllowListKey(key);
    if (err) fail(givenOnCli('allowMetricLabels') ? err : `--allow-metric-labels-manifest: ${err}`);
  }
  return {
    disabledMetrics: disabled,
    showHiddenMetricsForVersion: show || undefined,
    allowListMapping: mapping ? toAllowList(mapping) : undefined,
  };
}
