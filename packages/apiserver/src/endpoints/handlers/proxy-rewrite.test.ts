// The proxy's link rewriting without a server: URLs as Kubernetes' rewriteURL (with Go's
// net/url parsing and escaping) treats them, with the transport the API server uses (no
// scheme or host of its own, so links become paths), and the streaming HTML stage.
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { gzipSync, gunzipSync, deflateRawSync, deflateSync, inflateRawSync, inflateSync } from 'node:zlib';
import { forwardedUri, rewriteProxiedUrl, unescapedPrefix, type RewriteTarget } from './proxy-rewrite-url.js';
import { rewriteAnswer } from './proxy-rewrite.js';

const target: RewriteTarget = {
  prefix: '/api/v1/namespaces/ns/pods/web:8080/proxy',
  backendHost: '10.1.2.3:8080',
  requestHost: 'api.example:6443',
};
const P = target.prefix;
const rw = (u: string): string => rewriteProxiedUrl(u, target);

/** A Writable that keeps what it is given in `out`. */
function sink(out: Buffer[]): Writable {
  return new Writable({
    write(chunk: Buffer, _enc, done): void {
      out.push(Buffer.from(chunk));
      done();
    },
  });
}

async function through(html: string[] | Buffer, headers: Record<string, string>): Promise<Buffer> {
  const answer = rewriteAnswer({ headers, target, bodiless: false });
  const out: Buffer[] = [];
  await pipeline([
    Readable.from(Array.isArray(html) ? html.map((s) => Buffer.from(s)) : [html]),
    ...answer.body,
    sink(out),
  ]);
  return Buffer.concat(out);
}

describe('rewriteProxiedUrl (Kubernetes rewriteURL)', () => {
  it('puts the prefix before absolute paths and drops the backend host; leaves relative URLs and other hosts', () => {
    expect(rw('/google.log')).toBe(`${P}/google.log`);
    expect(rw('/google.log/')).toBe(`${P}/google.log/`);
    expect(rw('/')).toBe(`${P}/`);
    expect(rw('/a/../b/./c?x=1&y=2#frag')).toBe(`${P}/b/c?x=1&y=2#frag`);
    expect(rw('http://10.1.2.3:8080/app.js')).toBe(`${P}/app.js`);
    expect(rw('//10.1.2.3:8080/app.js')).toBe(`${P}/app.js`);
    expect(rw('https://api.example:6443/x')).toBe(`https://api.example:6443${P}/x`);
    expect(rw(`${P}/already`)).toBe(`${P}/already`);
    expect(rw(`http://10.1.2.3:8080${P}/already`)).toBe(`${P}/already`);
    for (const same of ['kubelet.log', '../up', '?q=1', '#top', 'http://example.com/x', 'mailto:a@b', ''])
      expect(rw(same)).toBe(same);
    // No path at all is relative in Go's eyes: the URL is left as it is.
    expect(rw('http://10.1.2.3:8080')).toBe('http://10.1.2.3:8080');
    // Another port of the same address is another host.
    expect(rw('http://10.1.2.3:9090/x')).toBe('http://10.1.2.3:9090/x');
  });

  it('escapes as Go writes a URL, and refuses what Go cannot parse', () => {
    expect(rw('/redirected/target/%00<script>alert(1)</script>/')).toBe(
      `${P}/redirected/target/%00%3Cscript%3Ealert%281%29%3C/script%3E/`,
    );
    expect(rw('http://example.com/t/%00<script>alert(1)</script>/')).toBe(
      'http://example.com/t/%00%3Cscript%3Ealert%281%29%3C/script%3E/',
    );
    expect(rw('/caf\u00e9 menu')).toBe(`${P}/caf%C3%A9%20menu`);
    expect(rw('HTTP://Example.com/x')).toBe('http://Example.com/x');
    expect(() => rw('http://[::1/x')).toThrow(`parse "http://[::1/x": missing ']' in host`);
    expect(() => rw('/a%zzb')).toThrow('invalid URL escape "%zz"');
    expect(() => rw('\n/x')).toThrow('net/url: invalid control character in URL');
    expect(() => rw(':x')).toThrow('missing protocol scheme');
    expect(() => rw('http://h:xx/')).toThrow('invalid port ":xx" after host');
  });

  it('builds X-Forwarded-Uri from the prefix and the backend path, and unescapes the prefix', () => {
    expect(forwardedUri(P, '/logs/log.log')).toBe(`${P}/logs/log.log`);
    expect(forwardedUri(P, '/')).toBe(`${P}/`);
    expect(forwardedUri(P, '/a(1)/')).toBe(`${P}/a%281%29/`);
    expect(unescapedPrefix('/api/v1/namespaces/ns/pods/web%3A8080/proxy')).toBe(P);
  });
});

describe('rewriteAnswer', () => {
  const page =
    '<!DOCTYPE html><HTML><Body BACKGROUND=/bg.png><a class=x href=/a>a</a><a href=b>b</a>' +
    '<script>var s = "<a href=/not-a-tag>";</script><!-- <a href=/comment> -->' +
    '<img src=\'/i.png\' alt="&amp;"/><form action="http://10.1.2.3:8080/post?x=1&amp;y=2"></form>' +
    '<link rel=stylesheet href="http://cdn.example/s.css"><p>caf\u00e9</p></Body></HTML>';
  const want =
    `<!DOCTYPE html><HTML><body background="${P}/bg.png"><a class="x" href="${P}/a">a</a><a href=b>b</a>` +
    '<script>var s = "<a href=/not-a-tag>";</script><!-- <a href=/comment> -->' +
    `<img src="${P}/i.png" alt="&amp;"/><form action="${P}/post?x=1&amp;y=2"></form>` +
    '<link rel=stylesheet href="http://cdn.example/s.css"><p>caf\u00e9</p></Body></HTML>';

  it('rewrites text/html in a stream, whatever the chunking (a tag or a character split in two)', async () => {
    const bytes = Buffer.from(page);
    expect((await through([page], { 'content-type': 'text/html; charset=utf-8' })).toString()).toBe(want);
    // One byte at a time splits every tag and the two bytes of é.
    const answer = rewriteAnswer({ headers: { 'content-type': 'text/html' }, target, bodiless: false });
    const out: Buffer[] = [];
    await pipeline([Readable.from([...bytes].map((b) => Buffer.from([b]))), ...answer.body, sink(out)]);
    expect(Buffer.concat(out).toString()).toBe(want);
  });

  it('decodes gzip and both deflate forms, and encodes the page again the same way', async () => {
    const gz = await through(gzipSync(page), { 'content-type': 'text/html', 'content-encoding': 'gzip' });
    expect(gunzipSync(gz).toString()).toBe(want);
    const raw = await through(deflateRawSync(page), { 'content-type': 'text/html', 'content-encoding': 'deflate' });
    expect(inflateRawSync(raw).toString()).toBe(want);
    const zlib = await through(deflateSync(page), { 'content-type': 'text/html', 'content-encoding': 'deflate' });
    expect(inflateSync(zlib).toString()).toBe(want);
  });

  it('passes other types and encodings, rewrites Location, drops CORS headers and Content-Length', () => {
    for (const headers of [
      { 'content-type': 'text/plain' },
      { 'content-type': 'application/xhtml+xml' },
      { 'content-type': 'text/html', 'content-encoding': 'br' },
    ])
      expect(rewriteAnswer({ headers, target, bodiless: false }).body).toEqual([]);
    const html = rewriteAnswer({
      headers: { 'content-type': 'text/html', 'content-length': '10', 'access-control-allow-origin': '*', etag: 'e' },
      target,
      bodiless: false,
    });
    expect(html.headers).toEqual({ 'content-type': 'text/html', etag: 'e' });
    expect(html.body.length).toBeGreaterThan(0);
    const moved = rewriteAnswer({
      headers: { location: 'http://10.1.2.3:8080/next/', 'content-type': 'text/html', 'content-length': '3' },
      target,
      bodiless: false,
    });
    expect(moved).toEqual({
      headers: { location: `${P}/next/`, 'content-type': 'text/html', 'content-length': '3' },
      body: [],
    });
    expect(() => rewriteAnswer({ headers: { location: 'http://[::1' }, target, bodiless: false })).toThrow(
      `Internal error occurred: error trying to parse Location header: parse "http://[::1": missing ']' in host`,
    );
  });
});
