/**
 * `pattern` and CEL `matches()` regular expressions. Kubernetes uses Go's RE2; we run them as
 * ECMAScript regular expressions after translating the RE2 spellings that differ (leading
 * `(?i)`/`(?s)`/`(?m)` flags, `(?P<name>`, `\A`, `\z`, POSIX classes such as `[[:alpha:]]`).
 * Patterns outside that common subset may behave differently (e.g. backtracking features RE2
 * rejects are accepted here).
 */
const POSIX: Record<string, string> = {
  alnum: '0-9A-Za-z',
  alpha: 'A-Za-z',
  ascii: '\\x00-\\x7F',
  blank: '\\t ',
  cntrl: '\\x00-\\x1F\\x7F',
  digit: '0-9',
  graph: '!-~',
  lower: 'a-z',
  print: ' -~',
  punct: '!-\\/:-@\\[-`{-~',
  space: '\\t\\n\\v\\f\\r ',
  upper: 'A-Z',
  word: '0-9A-Za-z_',
  xdigit: '0-9A-Fa-f',
};

const cache = new Map<string, RegExp | Error>();

function translate(pattern: string): { source: string; flags: string } {
  let source = pattern;
  let flags = '';
  const lead = /^\(\?([ims]+)\)/.exec(source);
  if (lead) {
    flags = [...new Set(lead[1])].join('');
    source = source.slice(lead[0].length);
  }
  source = source
    .replace(/\(\?P</g, '(?<')
    .replace(/\\A/g, '^')
    .replace(/\\z/g, '$')
    .replace(/\[:([a-z]+):\]/g, (m, name: string) => POSIX[name] ?? m);
  return { source, flags };
}

/** The compiled pattern, or the error that says why it does not compile. */
export function compilePattern(pattern: string): RegExp | Error {
  const hit = cache.get(pattern);
  if (hit) return hit;
  const { source, flags } = translate(pattern);
  let out: RegExp | Error;
  try {
    out = new RegExp(source, `${flags}u`);
  } catch {
    try {
      out = new RegExp(source, flags);
    } catch (e) {
      out = e instanceof Error ? e : new Error(String(e));
    }
  }
  if (cache.size > 1000) cache.clear();
  cache.set(pattern, out);
  return out;
}
