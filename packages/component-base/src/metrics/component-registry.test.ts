import { Command } from 'commander';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Counter, Gauge, Histogram } from 'prom-client';
import { parseFlags } from '../flags.js';
import { ComponentRegistry } from './component-registry.js';
import { metricsPolicy, parseStringToString, withMetricsFlags } from './metrics-flags.js';
import { isHiddenIn } from './stability.js';

const STABILITY = {
  stable_total: { stability: 'STABLE' as const },
  deprecated_now_total: { stability: 'STABLE' as const, deprecatedVersion: '1.32' },
  stable_dep_130_total: { stability: 'STABLE' as const, deprecatedVersion: '1.30' },
  stable_dep_129_total: { stability: 'STABLE' as const, deprecatedVersion: '1.29' },
  beta_dep_131_total: { stability: 'BETA' as const, deprecatedVersion: '1.31' },
};

function counter(registry: ComponentRegistry, name: string, labelNames: string[] = []): Counter {
  return new Counter({ name, help: `help of ${name}`, labelNames, registers: [registry] });
}

describe('stability classes and deprecation', () => {
  it('prefixes the class and the deprecation, and hides after the class window', async () => {
    const r = new ComponentRegistry({ stability: STABILITY, currentVersion: '1.32' });
    for (const n of Object.keys(STABILITY)) counter(r, n).inc();
    counter(r, 'undeclared_total').inc();
    const text = await r.metrics();
    expect(text).toContain('# HELP stable_total [STABLE] help of stable_total');
    expect(text).toContain('# HELP undeclared_total [ALPHA] help of undeclared_total');
    expect(text).toContain('# HELP deprecated_now_total [STABLE] (Deprecated from 1.32) help of deprecated_now_total');
    expect(text).toContain('# HELP stable_dep_130_total [STABLE] (Deprecated from 1.30)');
    // STABLE: visible 3 releases after deprecation (hidden when deprecated = current - 3).
    expect(text).not.toContain('stable_dep_129_total');
    // BETA: 1 release.
    expect(text).not.toContain('beta_dep_131_total');
    expect(text).toMatch(/^hidden_metrics_total 2$/m);
    expect(r.hiddenMetrics()).toEqual(['stable_dep_129_total', 'beta_dep_131_total']);
    expect(text).toMatch(/^registered_metrics_total\{stability_level="STABLE",deprecated_version="1.30"\} 1$/m);
  });

  it('shows hidden metrics when asked, and disabling wins over showing', async () => {
    const r = new ComponentRegistry({
      stability: STABILITY,
      currentVersion: '1.32',
      showHiddenMetricsForVersion: '1.31',
      disabledMetrics: ['beta_dep_131_total', 'stable_total'],
    });
    for (const n of Object.keys(STABILITY)) counter(r, n).inc();
    const text = await r.metrics();
    expect(text).toContain('# HELP stable_dep_129_total [STABLE] (Deprecated from 1.29)');
    expect(text).not.toContain('beta_dep_131_total');
    expect(text).not.toMatch(/^stable_total /m);
    expect(text).toMatch(/^disabled_metrics_total 2$/m);
  });

  it('judges hiding by class window', () => {
    expect(isHiddenIn({ stability: 'STABLE', deprecatedVersion: '1.29' }, '1.32')).toBe(true);
    expect(isHiddenIn({ stability: 'STABLE', deprecatedVersion: '1.30' }, '1.32')).toBe(false);
    expect(isHiddenIn({ stability: 'ALPHA', deprecatedVersion: '1.32' }, '1.32')).toBe(false);
    expect(isHiddenIn({ stability: 'ALPHA', deprecatedVersion: '1.31' }, '1.32')).toBe(true);
    expect(isHiddenIn({ stability: 'STABLE' }, '1.32')).toBe(false);
  });
});

describe('label allow-lists', () => {
  it('records values outside the list as unexpected, through every recording path', async () => {
    const r = new ComponentRegistry({
      allowListMapping: { 'c_total,code': ['200', '404'], 'g,kind': ['a'], 'h_seconds,verb': ['GET'] },
    });
    const c = counter(r, 'c_total', ['code', 'method']);
    c.inc({ code: '200', method: 'x' });
    c.inc({ code: '500', method: 'x' });
    c.labels('503', 'y').inc(2);
    c.labels({ code: '404', method: 'y' }).inc();
    const g = new Gauge({ name: 'g', help: 'g', labelNames: ['kind'], registers: [r] });
    g.set({ kind: 'a' }, 1);
    g.set({ kind: 'b' }, 7);
    g.labels('c').inc(1);
    const h = new Histogram({ name: 'h_seconds', help: 'h', labelNames: ['verb'], buckets: [1], registers: [r] });
    h.observe({ verb: 'GET' }, 0.5);
    h.observe({ verb: 'PUT' }, 0.5);
    h.labels('DELETE').observe(2);
    h.startTimer({ verb: 'PATCH' })();
    const text = await r.metrics();
    expect(text).toMatch(/^c_total\{code="200",method="x"\} 1$/m);
    expect(text).toMatch(/^c_total\{code="unexpected",method="x"\} 1$/m);
    expect(text).toMatch(/^c_total\{code="unexpected",method="y"\} 2$/m);
    expect(text).toMatch(/^c_total\{code="404",method="y"\} 1$/m);
    expect(text).not.toMatch(/code="50[03]"/);
    expect(text).toMatch(/^g\{kind="unexpected"\} 8$/m);
    expect(text).toMatch(/^h_seconds_count\{verb="unexpected"\} 3$/m);
    expect(text).toMatch(/^h_seconds_count\{verb="GET"\} 1$/m);
  });
});

describe('metrics flags', () => {
  const parse = (argv: string[]) =>
    metricsPolicy(parseFlags(withMetricsFlags(new Command('x')), argv, { quiet: true }));

  it('reads pflag stringToString values', () => {
    expect(parseStringToString("m,l='a,b'")).toEqual({ 'm,l': "'a,b'" });
    expect(parseStringToString('"m1,l1=a,b","m2,l2=c"')).toEqual({ 'm1,l1': 'a,b', 'm2,l2': 'c' });
    expect(parse(['--allow-metric-labels', 'm,l=a,b', '--allow-metric-labels', 'n,k=c']).allowListMapping).toEqual({
      'm,l': ['a', 'b'],
      'n,k': ['c'],
    });
  });

  it('accepts only the previous minor version for hidden metrics', () => {
    expect(parse(['--show-hidden-metrics-for-version', '1.31']).showHiddenMetricsForVersion).toBe('1.31');
    for (const bad of ['1.30', '1.32', 'x', '1.31.0'])
      expect(() => parse(['--show-hidden-metrics-for-version', bad])).toThrow(
        /--show-hidden-metrics-for-version must be omitted or have the value '1.31'/,
      );
  });

  it('refuses bad names and keys', () => {
    expect(() => parse(['--disabled-metrics', 'a-b'])).toThrow(/--disabled-metrics: "a-b" is not a valid metric name/);
    expect(() => parse(['--allow-metric-labels', 'nolabel=a'])).toThrow(/--allow-metric-labels must have/);
    expect(() => parse(['--allow-metric-labels', 'a,b,c=a'])).toThrow(/--allow-metric-labels must have/);
    expect(() => parse(['--allow-metric-labels', 'm,l'])).toThrow(/must be formatted as key=value/);
  });

  it('reads the manifest, and the flag wins over it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'metrics-manifest-'));
    const file = join(dir, 'allow.yaml');
    writeFileSync(file, '# allow-list\n"m,l": "a,b"\nn,k: c\n');
    expect(parse(['--allow-metric-labels-manifest', file]).allowListMapping).toEqual({
      'm,l': ['a', 'b'],
      'n,k': ['c'],
    });
    expect(parse(['--allow-metric-labels-manifest', file, '--allow-metric-labels', 'x,y=z']).allowListMapping).toEqual({
      'x,y': ['z'],
    });
    writeFileSync(file, 'bad key: a\n');
    expect(() => parse(['--allow-metric-labels-manifest', file])).toThrow(/--allow-metric-labels-manifest: .*bad key/);
    expect(() => parse(['--allow-metric-labels-manifest', join(dir, 'missing')])).toThrow(
      /--allow-metric-labels-manifest: .*missing/,
    );
  });
});

describe('configure', () => {
  it('applies a policy to metrics registered before it', async () => {
    const r = new ComponentRegistry({ stability: STABILITY, currentVersion: '1.32' });
    const c = counter(r, 'c_total', ['code']);
    counter(r, 'stable_dep_129_total').inc();
    counter(r, 'gone_total').inc();
    r.configure({
      disabledMetrics: ['gone_total'],
      showHiddenMetricsForVersion: '1.31',
      allowListMapping: { 'c_total,code': ['200'] },
    });
    c.inc({ code: '201' });
    const text = await r.metrics();
    expect(text).toMatch(/^c_total\{code="unexpected"\} 1$/m);
    expect(text).toMatch(/^stable_dep_129_total 1$/m);
    expect(text).not.toMatch(/^gone_total/m);
    expect(text).toMatch(/^disabled_metrics_total 1$/m);
    expect(text).toMatch(/^hidden_metrics_total 0$/m);
  });
});
