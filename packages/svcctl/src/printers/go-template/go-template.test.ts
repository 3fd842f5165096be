// The go-template printer against stock kubectl's: the same object (a Deployment kubectl
// generates with --dry-run=client, so no server is needed) through the same templates; output,
// error text and exit code must match.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CliError } from '../../errors.js';
import { formatFloat, sprintf } from './fmt.js';
import { GoTemplatePrinter } from './printer.js';

const GENERATE = ['create', 'deployment', 'web', '--image=busybox', '--replicas=3', '--port=8080', '--dry-run=client'];

/**
 * A kubeconfig whose server is a closed port. With none (KUBECONFIG=/dev/null) kubectl tries
 * http://localhost:8080, and when something else on the machine listens there and does not
 * answer, each run waits 5 s for it: a full test run once took 300 s in this file.
 */
const NO_SERVER = [
  'apiVersion: v1',
  'kind: Config',
  'clusters: [{ name: none, cluster: { server: "https://127.0.0.1:1" } }]',
  'users: [{ name: none, user: { token: none } }]',
  'contexts: [{ name: none, context: { cluster: none, user: none } }]',
  'current-context: none',
].join('\n');

function kubectl(args: string[]): { code: number; stdout: string; stderr: string } {
  const env = { ...process.env, KUBECONFIG: join(dir, 'kubeconfig') };
  const r = spawnSync('kubectl', args, { encoding: 'utf8', env, stdio: ['ignore', 'pipe', 'pipe'] });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

function ours(
  template: string,
  o: { allowMissingKeys?: boolean } = {},
): { code: number; stdout: string; stderr: string } {
  try {
    const p = new GoTemplatePrinter(template, { allowMissingKeys: o.allowMissingKeys !== false });
    return { code: 0, stdout: p.print(deployment), stderr: '' };
  } catch (e) {
    if (!(e instanceof CliError)) throw e;
    return {
      code: 1,
      stdout: e.stdout ?? '',
      stderr: `${e.message.startsWith('error: ') ? '' : 'error: '}${e.message}\n`,
    };
  }
}

let deployment: unknown;
let dir: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'go-template-'));
  writeFileSync(join(dir, 'kubeconfig'), NO_SERVER);
  const r = kubectl([...GENERATE, '-o', 'json']);
  expect(r.code).toBe(0);
  deployment = JSON.parse(r.stdout);
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

const SUCCEEDS = [
  '{{.metadata.name}}{{"\\n"}}',
  '{{.spec.replicas}} {{.spec.template.spec.containers}}',
  '{{range .spec.template.spec.containers}}{{.name}}={{.image}} {{range .ports}}{{.containerPort}}/{{.protocol}}{{end}}{{"\\n"}}{{end}}',
  '{{range $i, $c := .spec.template.spec.containers}}{{$i}}:{{$c.name}}{{end}}',
  '{{range $k, $v := .metadata.labels}}{{$k}}={{$v}};{{end}}',
  '{{if .spec.paused}}paused{{else if .spec.replicas}}runs {{.spec.replicas}}{{else}}none{{end}}',
  '{{with .spec.selector}}{{.matchLabels}}{{end}} {{with .nope}}x{{else}}none{{end}}',
  '{{index .metadata.labels "app"}} {{index .spec.template.spec.containers 0 "name"}} {{index .metadata "nope"}}',
  '{{printf "%s has %v replicas (%5.1f|%-6s|%q|%d|%x)" .metadata.name .spec.replicas .spec.replicas "ab" "q" 42 255}}',
  '{{printf "%d %s" .spec.replicas}} {{printf "%s" "a" 3}}',
  '{{len .spec.template.spec.containers}} {{len .metadata.name}} {{.metadata.name | len}} {{.kind | printf "%q"}}',
  '{{- "a" -}}   {{- "b" }}  {{ "c" -}}  \n  d',
  '{{/* a comment */}}x {{- /* trimmed */ -}} y',
  '{{.metadata.nope}} {{.metadata.nope.deeper}} {{.metadata.creationTimestamp}} {{.status}}',
  '{{.}}',
  '{{eq .kind "Deployment"}} {{eq .kind "Pod" "Deployment"}} {{ne 1 2}} {{lt 1 2}} {{le 2 2}} {{gt "b" "a"}} {{ge 1.5 2.5}}',
  '{{and 1 0 2}} {{and 1 2}} {{or 0 "" "x"}} {{or 0 ""}} {{not .spec.paused}} {{not .spec}}',
  "{{ 3 }} {{ 1.5 }} {{ true }} {{ -7 }} {{ 0x1F }} {{ 1e3 }} {{ 'a' }} {{ `raw\\n` }}",
  '{{ 1000000.0 }} {{ 123456789.0 }} {{ 0.00001 }} {{ 100000.0 }} {{ 1.0 }}',
  '{{$x := .kind}}{{$x}}{{with .metadata}}{{.name}}{{$x}}{{$}}{{end}}{{$x = "changed"}}{{$x}}',
  '{{range .spec.template.spec.containers}}{{$.metadata.name}}/{{.name}}{{end}}',
  '{{range .nope}}x{{else}}empty{{end}} {{range .items}}y{{end}}',
  '{{(.metadata).name}} {{(index .spec.template.spec.containers 0).image}} {{(len .kind)}}',
  '{{exists . "metadata" "name"}} {{exists . "metadata" "nope"}} {{exists . "spec" "template" "spec" "containers" 0 "image"}}',
  '{{base64decode "aGVsbG8="}}',
  '{{html "<a href=\'x\'>&</a>"}} {{js "it\'s <b>"}} {{urlquery "a b&c"}} {{print 1 2 "a" "b" 3}} {{println "x" 1}}',
  '{{range $i, $e := .spec.template.spec.containers}}{{if $i}},{{end}}{{$e.name}}{{end}}',
  '{{range .spec.template.spec.containers}}{{break}}{{end}}{{range $k, $v := .metadata.labels}}{{continue}}{{end}}done',
  '{{slice .metadata.name 1 2}} {{slice "abcdef" 2}}',
  'line1\n{{.kind}}\nline3\n',
];

const FAILS = [
  '{{.metadata.name',
  '{{end}}',
  '{{range .items}}x',
  '{{ foo }}',
  '{{$x}}',
  '{{"abc}}',
  '{{if}}{{end}}',
  '{{.metadata.name.x}}',
  '{{.metadata.creationTimestamp.x}}',
  '{{len 3}}',
  '{{len .nope}}',
  '{{index .metadata.labels 1}}',
  '{{index .nope "a"}}',
  '{{index .spec.template.spec.containers 5}}',
  '{{eq 1 1.0}}',
  '{{lt .metadata 1}}',
  '{{range .kind}}{{end}}',
  '{{ nil }}',
  '{{ 3 4 }}',
  '{{base64decode 3}}',
  '{{base64decode "!!"}}',
  'a\nb{{.kind}}\n  {{len .spec.replicas}}',
  '{{printf}}',
];

describe('go-template printer, compared with kubectl', () => {
  it.each(SUCCEEDS)('prints %j as kubectl does', (t) => {
    const want = kubectl([...GENERATE, '-o', `go-template=${t}`]);
    expect(want.code).toBe(0);
    expect(ours(t)).toEqual(want);
  });

  it.each(FAILS)('fails on %j as kubectl does', (t) => {
    const want = kubectl([...GENERATE, '-o', `go-template=${t}`]);
    expect(want.code).toBe(1);
    const got = ours(t);
    expect(got.code).toBe(1);
    expect(got.stderr).toBe(want.stderr);
    // The debugging text names the raw data kubectl marshalled from its typed object (field order differs).
    const head = (s: string): string => s.replace(/\traw data was:[\s\S]*$/, '');
    expect(head(got.stdout)).toBe(head(want.stdout));
  });

  it('fails on a missing key with --allow-missing-template-keys=false', () => {
    for (const t of ['{{.metadata.nope}}', '{{.nope.deeper}}', '{{.metadata.name}}']) {
      const want = kubectl([...GENERATE, '--allow-missing-template-keys=false', '-o', `go-template=${t}`]);
      const got = ours(t, { allowMissingKeys: false });
      expect({ code: got.code, stderr: got.stderr }).toEqual({ code: want.code, stderr: want.stderr });
    }
  });

  it('reads go-template-file as kubectl does', () => {
    const file = join(dir, 't.tmpl');
    writeFileSync(file, '{{range .spec.template.spec.containers}}{{.name}}\n{{end}}');
    const want = kubectl([...GENERATE, '-o', `go-template-file=${file}`]);
    expect(want.code).toBe(0);
    expect(ours('{{range .spec.template.spec.containers}}{{.name}}\n{{end}}').stdout).toBe(want.stdout);
  });
});

describe('Go fmt', () => {
  it('formats floats as Go does', () => {
    expect(formatFloat(3, { verb: 'g', prec: -1 })).toBe('3');
    expect(formatFloat(1e21, { verb: 'g', prec: -1 })).toBe('1e+21');
    expect(formatFloat(1234567, { verb: 'g', prec: -1 })).toBe('1.234567e+06');
    expect(formatFloat(0.0001, { verb: 'g', prec: -1 })).toBe('0.0001');
    expect(formatFloat(-2.5, { verb: 'f', prec: 2 })).toBe('-2.50');
    expect(formatFloat(1234.5678, { verb: 'e', prec: 2 })).toBe('1.23e+03');
  });

  it('marks mismatched verbs, missing and extra operands', () => {
    expect(sprintf('%d|%s|%t', ['x', 1n, 'y'])).toBe('%!d(string=x)|%!s(int64=1)|%!t(string=y)');
    expect(sprintf('%s %s', ['a'])).toBe('a %!s(MISSING)');
    expect(sprintf('%s', ['a', 'b', 2n])).toBe('a%!(EXTRA string=b, int64=2)');
    expect(sprintf('%05.1f|%+d|%-3d|', [3.14159, 5n, 7n])).toBe('003.1|+5|7  |');
  });
});
