/** All warnings of one answer may hold this many characters, as in Kubernetes (4 KiB of runes). */
export const WARNINGS_TOTAL_CHARS = 4096;
/** When they would hold more, each is cut to this many (Kubernetes' 256), and what still does not fit is left out. */
export const WARNING_CHARS = 256;

/**
 * The `Warning` header values for an answer's warnings: `299 - "<text>"`, each text once, in
 * order, within the bounds above (a body with thousands of unknown fields must not make headers
 * no client can read). The text is quoted in ASCII, JSON's escapes and `\uXXXX` past `~`:
 * Node refuses DEL and characters past U+00FF in headers, and writes the others as latin1 or as
 * UTF-8 depending on the body, so only ASCII arrives as sent. (Kubernetes sends UTF-8 as is.)
 */
export function warningHeaderValues(warnings: readonly string[]): string[] {
  const unique = [...new Set(warnings)];
  const chars = (s: string): number => [...s].length;
  const total = unique.reduce((n, w) => n + chars(w), 0);
  const fitted = total <= WARNINGS_TOTAL_CHARS ? unique : unique.map((w) => [...w].slice(0, WARNING_CHARS).join(''));
  const out: string[] = [];
  let used = 0;
  for (const w of fitted) {
    used += chars(w);
    if (used > WARNINGS_TOTAL_CHARS) break;
    out.push(`299 - ${asciiQuoted(w)}`);
  }
  return out;
}

function asciiQuoted(s: string): string {
  return JSON.stringify(s).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
