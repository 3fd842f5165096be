import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';

// DESIGN.md "Names: one module": product identifiers are spelled only in names.ts, so
// --naming=kubernetes switches all of them. Tests, test helpers and documentation URLs are exempt.
const ROOT = resolve(__dirname, '../../..');
// A '.' or '-' as code spells it: plain, escaped in a regular expression (`svc\.io`, also
// inside a string for `new RegExp`: 'svc\\.io'), or in a character class (`svc[.]io`).
const DOT = String.raw`(?:\\*\.|\[\\*\.\])`;
const DASH = String.raw`(?:\\*-|\[\\*-\])`;
const SPELLINGS = new RegExp(
  [
    `svc${DOT}io`,
    `k8s${DOT}io`,
    `kubernetes${DOT}io`,
    String.raw`\b(svc|kube)${DASH}(system|public|node${DASH}lease)\b`,
    `vnd${DOT}(svc|kubernetes)${DOT}protobuf`,
  ].join('|'),
);
const EXEMPT_FILE = /\.test\.ts$|-testing\.ts$|-suite\.ts$|\/names\.ts$/;

function sources(dir: string, out: string[] = []): string[] {
  for (const e of readdirSync(dir)) {
    const p = join(dir, e);
    if (statSync(p).isDirectory()) {
      if (e !== 'node_modules' && e !== 'dist') sources(p, out);
    } else if (p.endsWith('.ts') && !EXEMPT_FILE.test(p)) {
      out.push(p);
    }
  }
  return out;
}

/** Code without comments and URLs. */
function code(text: string): string {
  return text
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/(^|[^:'"`\\])\/\/.*$/gm, '$1')
    .replace(/https?:\/\/[^\s'"`]+/g, '');
}

it('no package spells a product identifier outside names.ts', () => {
  const packages = readdirSync(join(ROOT, 'packages')).filter((p) => p !== 'testing');
  const hits: string[] = [];
  for (const file of packages.flatMap((p) => sources(join(ROOT, 'packages', p, 'src')))) {
    code(readFileSync(file, 'utf8'))
      .split('\n')
      .forEach((line, i) => {
        if (SPELLINGS.test(line)) hits.push(`${relative(ROOT, file)}:${i + 1}: ${line.trim()}`);
      });
  }
  expect(hits).toEqual([]);
});

it('the check sees a spelling in code and ignores comments and URLs', () => {
  expect(SPELLINGS.test(code("const ns = 'kube-system';"))).toBe(true);
  expect(SPELLINGS.test(code('const g = `rbac.authorization.svc.io`;'))).toBe(true);
  expect(
    SPELLINGS.test(code('// the svc-system namespace\n/* k8s.io */ const u = "https://kubernetes.io/docs";')),
  ).toBe(false);
});

it.each([
  String.raw`const discovery = /^apidiscovery\.(svc\.io|k8s\.io)$/;`,
  String.raw`const g = new RegExp('^rbac\\.authorization\\.kubernetes\\.io$');`,
  String.raw`const ns = /^kube\-system$/;`,
  String.raw`const lease = /svc-node\-lease/;`,
  String.raw`const pb = /vnd\.kubernetes\.protobuf/;`,
  'const g = /svc[.]io/;',
])('the check sees a spelling escaped in a regular expression: %s', (line) => {
  expect(SPELLINGS.test(code(line))).toBe(true);
});
