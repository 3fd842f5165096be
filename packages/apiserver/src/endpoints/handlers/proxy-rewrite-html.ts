import { PassThrough, type Transform } from 'node:stream';
import { RewritingStream } from 'parse5-html-rewriting-stream';

/**
 * The URL-valued attributes of each element that the proxy rewrites: Kubernetes'
 * atomsToAttrs table (HTML 4 and HTML 5 attributes; URLs inside CSS are not rewritten there
 * either).
 */
export const URL_ATTRIBUTES: ReadonlyMap<string, ReadonlySet<string>> = new Map(
  Object.entries({
    a: ['href'],
    applet: ['codebase'],
    area: ['href'],
    audio: ['src'],
    base: ['href'],
    blockquote: ['cite'],
    body: ['background'],
    button: ['formaction'],
    command: ['icon'],
    del: ['cite'],
    embed: ['src'],
    form: ['action'],
    frame: ['longdesc', 'src'],
    head: ['profile'],
    html: ['manifest'],
    iframe: ['longdesc', 'src'],
    img: ['longdesc', 'src', 'usemap'],
    input: ['src', 'usemap', 'formaction'],
    ins: ['cite'],
    link: ['href'],
    object: ['classid', 'codebase', 'data', 'usemap'],
    q: ['cite'],
    script: ['src'],
    source: ['src'],
    video: ['poster', 'src'],
  }).map(([tag, attrs]) => [tag, new Set(attrs)]),
);

/**
 * The streaming stages that rewrite an HTML page's URLs: UTF-8 bytes in (as Kubernetes, the
 * page is taken to be UTF-8), UTF-8 text out. Each start tag in {@link URL_ATTRIBUTES} has its
 * URL attributes passed to `rewrite`, which answers the new value, or undefined to leave one
 * as it is; a tag whose values changed is written anew (lower-case names, double-quoted
 * values), everything else goes out exactly as it came. parse5's tokenizer follows the HTML
 * standard, so script and style text, comments and foreign content are never mistaken for tags.
 */
export function htmlUrlRewriting(rewrite: (value: string) => string | undefined): Transform[] {
  // A PassThrough with a readable encoding hands on whole characters even when a chunk
  // boundary splits one.
  const text = new PassThrough({ encoding: 'utf8' });
  const rewriter = new RewritingStream();
  rewriter.on('startTag', (tag, raw) => {
    const names = URL_ATTRIBUTES.get(tag.tagName);
    let changed = false;
    for (const attr of names ? tag.attrs : []) {
      if (!names?.has(attr.name)) continue;
      const next = rewrite(attr.value);
      if (next === undefined || next === attr.value) continue;
      attr.value = next;
      changed = true;
    }
    if (changed) rewriter.emitStartTag(tag);
    else rewriter.emitRaw(raw);
  });
  return [text, rewriter];
}
