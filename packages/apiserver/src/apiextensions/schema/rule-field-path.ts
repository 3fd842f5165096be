/**
 * The `fieldPath` of a validation rule (Kubernetes' cel.ValidFieldPath): a JSON path of `.name`
 * and `['key']` steps from the rule's node, each naming a declared property or, on a map, a key.
 * Returns the normalized field path (`spec.foo[bar]`), or an error text.
 */
import { additionalPropertiesOf, type JSONSchemaProps } from './types.js';
import { child, key } from './paths.js';

export type RuleFieldPath = { path: string; schema: JSONSchemaProps } | { error: string };

const ESCAPES: Record<string, string> = {
  a: '\x07',
  b: '\b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
  v: '\v',
  "'": "'",
  '\\': '\\',
};

/** Splits into `.`, `[`, `]` and the text between them; a single-quoted string is one token. */
function tokens(s: string): string[] {
  const out: string[] = [];
  let i = 0;
  while (i < s.length) {
    const c = s[i] ?? '';
    if (c === '.' || c === '[' || c === ']') {
      out.push(c);
      i++;
      continue;
    }
    let j = i;
    if (c === "'") {
      j++;
      while (j < s.length && !(s[j] === "'" && s[j - 1] !== '\\')) j++;
      j = Math.min(j + 1, s.length);
    } else {
      while (j < s.length && !'.[]'.includes(s[j] ?? '')) j++;
    }
    out.push(s.slice(i, j));
    i = j;
  }
  return out;
}

function unescapeQuoted(s: string): string | undefined {
  let bad = false;
  const out = s.replace(/\\./g, (m) => {
    const r = ESCAPES[m[1] ?? ''];
    if (r === undefined) bad = true;
    return r ?? '';
  });
  return bad ? undefined : out;
}

export function ruleFieldPath(jsonPath: string, schema: JSONSchemaProps): RuleFieldPath {
  const toks = tokens(jsonPath);
  let path = '';
  let s = schema;
  const step = (name: string): string | undefined => {
    if (s.properties) {
      path = child(path, name);
      const p = s.properties[name];
      if (!p) return 'does not refer to a valid field';
      s = p;
    } else if (s.additionalProperties !== undefined) {
      path = key(path, name);
      s = additionalPropertiesOf(s) ?? {};
    } else {
      return 'does not refer to a valid field';
    }
    return undefined;
  };
  for (let i = 0; i < toks.length; i++) {
    const tok = toks[i] ?? '';
    if (tok === '[') {
      const q = toks[++i];
      if (q === undefined) return { error: 'unexpected end of JSON path' };
      if (q.length < 2 || !q.startsWith("'") || !q.endsWith("'")) {
        return { error: `expected single quoted string but got ${q}` };
      }
      const name = unescapeQuoted(q.slice(1, -1));
      if (name === undefined) return { error: 'invalid string literal' };
      const err = step(name);
      if (err) return { error: err };
      const close = toks[++i];
      if (close === undefined) return { error: 'unexpected end of JSON path' };
      if (close !== ']') return { error: `expected ] but got ${close}` };
    } else if (tok === '.') {
      const name = toks[++i];
      if (name === undefined) return { error: 'unexpected end of JSON path' };
      const err = step(name);
      if (err) return { error: err };
    } else {
      return { error: `expected [ or . but got: ${tok}` };
    }
  }
  return { path, schema: s };
}
