// The proxy's URL rewriting (Kubernetes' proxy Transport.rewriteURL) with Go's net/url
// semantics: parsed as url.Parse does (its errors, the unescaped path it compares), written
// back as URL.String does (the path re-escaped when it changed). Work is done on byte strings
// (one char per byte) so that percent-escapes and non-ASCII text behave as Go's bytes do.

/** A URL that Go's url.Parse refuses; `message` is Go's text (`parse "<url>": <why>`). */
export class UrlParseError extends Error {
  constructor(raw: string, why: string) {
    super(`parse ${JSON.stringify(fromBytes(raw))}: ${why}`);
    this.name = 'UrlParseError';
  }
}

/** What a rewritten URL is measured against. */
export interface RewriteTarget {
  /** The proxy path up to and including `/proxy`, unescaped (Kubernetes' PathPrepend). */
  prefix: string;
  /** The backend's `host:port` (the proxied request's URL host). */
  backendHost: string;
  /** The Host the client asked this server for. */
  requestHost: string;
}

type Mode = 'path' | 'fragment' | 'host';

interface GoUrl {
  scheme: string;
  opaque: string;
  user?: string;
  host: string;
  omitHost: boolean;
  /** Unescaped path, and the path as written (escaped). */
  path: string;
  rawPath: string;
  pathChanged: boolean;
  query?: string;
  fragment: string;
  rawFragment: string;
}

const toBytes = (s: string): string => Buffer.from(s, 'utf8').toString('latin1');
const fromBytes = (b: string): string => Buffer.from(b, 'latin1').toString('utf8');
const isAlnum = (c: string): boolean => /^[A-Za-z0-9]$/.test(c);
const isHex = (c: string | undefined): boolean => c !== undefined && /^[0-9A-Fa-f]$/.test(c);

/** Go's shouldEscape for the modes the proxy meets. */
function shouldEscape(c: string, mode: Mode): boolean {
  if (isAlnum(c)) return false;
  if (mode === 'host' && `!$&'()*+,;=:[]<>"`.includes(c)) return false;
  if ('-_.~'.includes(c)) return false;
  if ('$&+,/:;=?@'.includes(c)) return mode === 'path' ? c === '?' : mode === 'fragment' ? false : true;
  if (mode === 'fragment' && '!()*'.includes(c)) return false;
  return true;
}

function escape(s: string, mode: Mode): string {
  let out = '';
  for (const c of s)
    out += shouldEscape(c, mode) ? `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}` : c;
  return out;
}

function unescape(raw: string, s: string, mode: Mode): string {
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const c = s[i] ?? '';
    if (c === '%') {
      if (!isHex(s[i + 1]) || !isHex(s[i + 2]))
        throw new UrlParseError(raw, `invalid URL escape ${JSON.stringify(fromBytes(s.slice(i, i + 3)))}`);
      out += String.fromCharCode(parseInt(s.slice(i + 1, i + 3), 16));
      i += 2;
    } else {
      if (mode === 'host' && c.charCodeAt(0) < 0x80 && shouldEscape(c, 'host'))
        throw new UrlParseError(raw, `invalid character ${JSON.stringify(c)} in host name`);
      out += c;
    }
  }
  return out;
}

/** Go's validEncoded: every byte may stand as written. */
function validEncoded(s: string, mode: Mode): boolean {
  for (const c of s) if (!`!$&'()*+,;=:@[]%`.includes(c) && shouldEscape(c, mode)) return false;
  return true;
}

function parseHost(raw: string, host: string): string {
  const validPort = (p: string): boolean => p === '' || /^:[0-9]*$/.test(p);
  if (host.startsWith('[')) {
    const i = host.lastIndexOf(']');
    if (i < 0) throw new UrlParseError(raw, "missing ']' in host");
    const port = host.slice(i + 1);
    if (!validPort(port)) throw new UrlParseError(raw, `invalid port ${JSON.stringify(port)} after host`);
  } else if (host.includes(':')) {
    const port = host.slice(host.lastIndexOf(':'));
    if (!validPort(port)) throw new UrlParseError(raw, `invalid port ${JSON.stringify(port)} after host`);
  }
  return unescape(raw, host, 'host');
}

/** Go's url.Parse on a byte string. */
function parse(input: string): GoUrl {
  const hash = input.indexOf('#');
  const raw = hash < 0 ? input : input.slice(0, hash);
  const rawFragment = hash < 0 ? '' : input.slice(hash + 1);
  // eslint-disable-next-line no-control-regex
  if (/[\x00-\x1f\x7f]/.test(raw)) throw new UrlParseError(raw, 'net/url: invalid control character in URL');
  const u: GoUrl = {
    scheme: '',
    opaque: '',
    host: '',
    omitHost: false,
    path: '',
    rawPath: '',
    pathChanged: false,
    fragment: '',
    rawFragment,
  };
  let rest = raw;
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(raw);
  if (raw.startsWith(':')) throw new UrlParseError(raw, 'missing protocol scheme');
  if (scheme?.[1]) {
    u.scheme = scheme[1].toLowerCase();
    rest = raw.slice(scheme[0].length);
  }
  const q = rest.indexOf('?');
  if (q >= 0) {
    u.query = rest.slice(q + 1);
    rest = rest.slice(0, q);
  }
  if (!rest.startsWith('/')) {
    if (u.scheme) {
      u.opaque = rest;
      return withFragment(raw, u);
    }
    if ((rest.split('/')[0] ?? '').includes(':'))
      throw new UrlParseError(raw, 'first path segment in URL cannot contain colon');
  }
  if ((u.scheme || !rest.startsWith('///')) && rest.startsWith('//')) {
    const slash = rest.indexOf('/', 2);
    const authority = slash < 0 ? rest.slice(2) : rest.slice(2, slash);
    rest = slash < 0 ? '' : rest.slice(slash);
    const at = authority.lastIndexOf('@');
    u.host = parseHost(raw, at < 0 ? authority : authority.slice(at + 1));
    if (at >= 0) {
      u.user = authority.slice(0, at);
      if (!/^[A-Za-z0-9\-._:~!$&'()*+,;=%@]*$/.test(u.user)) throw new UrlParseError(raw, 'net/url: invalid userinfo');
    }
  } else if (u.scheme && rest.startsWith('/')) {
    u.omitHost = true;
  }
  u.path = unescape(raw, rest, 'path');
  u.rawPath = rest;
  return withFragment(input, u);
}

function withFragment(raw: string, u: GoUrl): GoUrl {
  if (u.rawFragment) u.fragment = unescape(raw, u.rawFragment, 'fragment');
  return u;
}

/** Go's EscapedPath / EscapedFragment: as written when that is a valid escaping, else re-escaped. */
function escapedAsWritten(o: { raw: string; value: string; mode: Mode; changed: boolean }): string {
  if (!o.changed && validEncoded(o.raw, o.mode)) return o.raw;
  return escape(o.value, o.mode);
}

/** Go's URL.String. */
function format(u: GoUrl): string {
  let out = u.scheme ? `${u.scheme}:` : '';
  if (u.opaque) out += u.opaque;
  else {
    if ((u.scheme || u.host || u.user !== undefined) && !(u.omitHost && !u.host && u.user === undefined)) {
      if (u.host || u.path || u.user !== undefined) out += '//';
      if (u.user !== undefined) out += `${u.user}@`;
      out += escape(u.host, 'host');
    }
    const path = escapedAsWritten({ raw: u.rawPath, value: u.path, mode: 'path', changed: u.pathChanged });
    if (path && !path.startsWith('/') && u.host) out += '/';
    if (!out && (path.split('/')[0] ?? '').includes(':')) out += './';
    out += path;
  }
  if (u.query !== undefined) out += `?${u.query}`;
  if (u.fragment)
    out += `#${escapedAsWritten({ raw: u.rawFragment, value: u.fragment, mode: 'fragment', changed: false })}`;
  return fromBytes(out);
}

/** Go's path.Clean for a rooted path. */
function cleanPath(p: string): string {
  const out: string[] = [];
  for (const seg of p.split('/')) {
    if (seg === '' || seg === '.') continue;
    if (seg === '..') out.pop();
    else out.push(seg);
  }
  return `/${out.join('/')}`;
}

/** Joins the prefix and a path as Go's path.Join, keeping the path's trailing slash. */
function joinKeepingSlash(prefix: string, path: string): string {
  const joined = cleanPath(`${prefix}/${path}`);
  return path.endsWith('/') && joined !== '/' ? `${joined}/` : joined;
}

/**
 * Kubernetes' rewriteURL for one URL found on a proxied page or in a `Location` header: a URL
 * with a path that starts with `/`, on no host or on the backend's host (or on the host the
 * client asked for), goes through the proxy: the backend's scheme and host are dropped and
 * the prefix put in front of the path, unless the path already starts with it. Relative URLs
 * and other hosts' URLs are only normalized as Go writes them. Throws {@link UrlParseError}
 * for what Go's url.Parse refuses.
 */
export function rewriteProxiedUrl(value: string, t: RewriteTarget): string {
  const u = parse(toBytes(value));
  const otherHost = u.host !== '' && u.host !== t.backendHost && u.host !== t.requestHost;
  if (otherHost || !u.path.startsWith('/')) return format(u);
  // This server's own scheme and host are not known here (Kubernetes' Transport has them
  // empty), so a URL on the backend's host becomes a path on the client's.
  if (u.host !== t.requestHost) {
    u.scheme = '';
    u.host = '';
  }
  const prefix = toBytes(t.prefix);
  if (u.path.startsWith(prefix)) return format(u);
  u.path = joinKeepingSlash(prefix, u.path);
  u.pathChanged = true;
  return format(u);
}

/**
 * The `X-Forwarded-Uri` Kubernetes sends the backend: the prefix joined with the backend
 * path as Go escapes it (unescaped, then escaped again), keeping its trailing slash; a byte
 * string, as a header value is written.
 */
export function forwardedUri(prefix: string, backendPath: string): string {
  const raw = toBytes(backendPath);
  let path = raw;
  try {
    path = escape(unescape(raw, raw, 'path'), 'path');
  } catch {
    // A path Go could not have parsed: sent as it came.
  }
  return joinKeepingSlash(toBytes(prefix), path);
}

/** The proxy prefix from the request path as sent: percent-escapes decoded, as Go's URL.Path has it. */
export function unescapedPrefix(rawPrefix: string): string {
  const bytes = toBytes(rawPrefix);
  try {
    return fromBytes(unescape(bytes, bytes, 'path'));
  } catch {
    return rawPrefix;
  }
}
