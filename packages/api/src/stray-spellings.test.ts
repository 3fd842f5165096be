import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';

// DESIGN.md "Names: one module": product identifiers are spelled only in names.ts, so
// --naming=kubernetes switches all of them. Tests, test helpers and documentation URLs are exempt.
const ROOT = resolve(__dirname, '../../..');
const SPELLINGS =
  /svc\.io|k8s\.io|kubernetes\.io|\b(svc|kube)-(system|public|node-lease)\b|vnd\.(svc|kubernetes)\.protobuf/;
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
