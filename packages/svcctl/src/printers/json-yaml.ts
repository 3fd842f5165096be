import { goYaml } from './go-yaml.js';

/** Keys sorted at every level, as Go's encoder writes maps (kubectl prints objects as maps). */
export function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(v).sort()) out[k] = sortKeys((v as Record<string, unknown>)[k]);
    return out;
  }
  return v;
}

/** Go's HTML-safe escaping of JSON text (`<`, `>`, `&`, U+2028, U+2029). */
export function goEscape(json: string): string {
  return json.replace(/[<>&\u2028\u2029]/g, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** `-o json`: four-space indent, sorted keys, newline-terminated. */
export function toJson(v: unknown): string {
  return `${goEscape(JSON.stringify(sortKeys(v), null, 4))}\n`;
}

/** Compact JSON as Go's `json.Marshal` writes a map. */
export function toCompactJson(v: unknown): string {
  return goEscape(JSON.stringify(sortKeys(v)));
}

/** `-o yaml` as kubectl writes it (see go-yaml.ts). */
export function toYaml(v: unknown): string {
  return goYaml(v);
}
