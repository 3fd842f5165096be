import { X509Certificate } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { TLSSocket, type DetailedPeerCertificate } from 'node:tls';
import type { Authenticator, UserInfo } from '@svc/component-base';
import { verifyClientChain } from '@svc/component-base';

/** The `--requestheader-*` flags (an authenticating proxy in front of the server). */
export interface RequestHeaderOptions {
  /** `--requestheader-client-ca-file`: the proxy's client certificate must chain to one of these. */
  roots: readonly X509Certificate[];
  /** `--requestheader-allowed-names`: Common Names the proxy may have; empty = any. */
  allowedNames: readonly string[];
  usernameHeaders: readonly string[];
  uidHeaders: readonly string[];
  groupHeaders: readonly string[];
  extraHeaderPrefixes: readonly string[];
  now?: () => number;
}

/**
 * Kubernetes' request-header authenticator: a request with a user name header is the proxy
 * asserting a user, believed only when the connection's client certificate verifies against
 * the request-header CA (not `--client-ca-file`) and has an allowed Common Name; otherwise the
 * request fails (other authenticators may still accept it). User from the first non-empty
 * user name header, uid likewise, groups from every value of the group headers, extra from
 * `<prefix><key>` headers (key lower-cased and percent-decoded). The headers are removed from
 * the request once used, like Kubernetes does.
 */
export class RequestHeaderAuthenticator implements Authenticator {
  constructor(private readonly o: RequestHeaderOptions) {}

  async authenticate(req: IncomingMessage): Promise<UserInfo | null> {
    const headers = req.headersDistinct;
    const first = (names: readonly string[]): string | undefined => {
      for (const n of names) {
        const v = headers[n.toLowerCase()]?.find((x) => x !== '');
        if (v !== undefined) return v;
      }
      return undefined;
    };
    const name = first(this.o.usernameHeaders);
    if (name === undefined) return null;
    const socket = req.socket;
    const peer = socket instanceof TLSSocket ? socket.getPeerCertificate(true) : undefined;
    if (!peer?.raw) throw new Error('requestheader: the request has user headers but no client certificate');
    const chain = presented(peer);
    const [leaf, ...intermediates] = chain;
    if (!leaf) throw new Error('requestheader: no client certificate');
    try {
      verifyClientChain(leaf, { intermediates, roots: this.o.roots, now: this.o.now?.() ?? Date.now() });
    } catch (e) {
      throw new Error(`requestheader: ${(e as Error).message}`, { cause: e });
    }
    if (this.o.allowedNames.length > 0) {
      const cn = /^CN=(.*)$/m.exec(leaf.subject)?.[1] ?? '';
      if (!this.o.allowedNames.includes(cn))
        throw new Error(`requestheader: x509: subject with cn=${cn} is not in the allowed list`);
    }
    const user: UserInfo = { name, groups: [] };
    const uid = first(this.o.uidHeaders);
    if (uid !== undefined) user.uid = uid;
    for (const g of this.o.groupHeaders) user.groups.push(...(headers[g.toLowerCase()] ?? []));
    for (const [h, values] of Object.entries(headers)) {
      for (const p of this.o.extraHeaderPrefixes) {
        const prefix = p.toLowerCase();
        if (!h.startsWith(prefix) || h.length === prefix.length || !values) continue;
        let key = h.slice(prefix.length);
        try {
          key = decodeURIComponent(key);
        } catch {
          /* kept as sent */
        }
        (user.extra ??= {})[key.toLowerCase()] = [...(user.extra?.[key.toLowerCase()] ?? []), ...values];
      }
    }
    this.clearHeaders(req);
    return user;
  }

  private clearHeaders(req: IncomingMessage): void {
    const exact = [...this.o.usernameHeaders, ...this.o.uidHeaders, ...this.o.groupHeaders].map((h) => h.toLowerCase());
    const prefixes = this.o.extraHeaderPrefixes.map((p) => p.toLowerCase());
    for (const h of Object.keys(req.headers)) {
      if (exact.includes(h) || prefixes.some((p) => h.startsWith(p))) delete req.headers[h];
    }
  }
}

function presented(peer: DetailedPeerCertificate): X509Certificate[] {
  const out: X509Certificate[] = [];
  const seen = new Set<string>();
  for (let c: DetailedPeerCertificate | undefined = peer; c?.raw && out.length < 10; c = c.issuerCertificate) {
    if (seen.has(c.fingerprint256)) break;
    seen.add(c.fingerprint256);
    out.push(new X509Certificate(c.raw));
  }
  return out;
}
