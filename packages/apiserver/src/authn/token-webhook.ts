import { createHash } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { group } from '@svc/api';
import type { TokenAuthenticator, TokenAuthResult, UserInfo } from '@svc/component-base';
import type { WebhookTarget } from '../webhook/kubeconfig.js';

export type TokenReviewVersion = 'v1' | 'v1beta1';

export interface TokenWebhookOptions {
  target: WebhookTarget;
  /** `--authentication-token-webhook-version`. */
  version: TokenReviewVersion;
  /** `--authentication-token-webhook-cache-ttl`; 0 turns the cache off. */
  cacheTtlMs: number;
  /** The server's own audiences: a reply without `status.audiences` means these. */
  apiAudiences: readonly string[];
  timeoutMs?: number;
  /** The clock (ms since the epoch) that dates cached answers and ages them against the TTL; `Date.now` by default. */
  now?: () => number;
}

const MAX_BYTES = 1024 * 1024;
const MAX_CACHE_ENTRIES = 4096;

interface TokenReviewStatus {
  authenticated?: boolean;
  user?: { username?: string; uid?: string; groups?: string[]; extra?: Record<string, string[]> };
  audiences?: string[];
  error?: string;
}

/**
 * Bearer tokens decided by a remote service (Kubernetes' webhook token authenticator): POSTs
 * a TokenReview (`authentication.<suffix>/<version>`) with the token and the wanted audiences
 * and takes `status.authenticated` and `status.user`. Answers, authenticated or not, are
 * cached per token and audiences for the TTL; failed calls are not cached and fail the token.
 */
export class TokenWebhookAuthenticator implements TokenAuthenticator {
  private readonly cache = new Map<string, { at: number; result: TokenAuthResult | null }>();

  constructor(private readonly o: TokenWebhookOptions) {}

  private now(): number {
    return this.o.now?.() ?? Date.now();
  }

  async authenticateToken(token: string, audiences: readonly string[]): Promise<TokenAuthResult | null> {
    const key = createHash('sha256').update(token).update('\0').update(audiences.join('\0')).digest('hex');
    const hit = this.cache.get(key);
    if (hit && this.now() - hit.at < this.o.cacheTtlMs) return hit.result;
    const result = await this.review(token, audiences);
    if (this.o.cacheTtlMs > 0) {
      if (this.cache.size >= MAX_CACHE_ENTRIES) {
        const now = this.now();
        for (const [k, v] of this.cache) if (now - v.at >= this.o.cacheTtlMs) this.cache.delete(k);
        if (this.cache.size >= MAX_CACHE_ENTRIES) this.cache.delete(this.cache.keys().next().value ?? '');
      }
      this.cache.set(key, { at: this.now(), result });
    }
    return result;
  }

  private async review(token: string, audiences: readonly string[]): Promise<TokenAuthResult | null> {
    const body = {
      apiVersion: `${group('authentication')}/${this.o.version}`,
      kind: 'TokenReview',
      metadata: { creationTimestamp: null },
      spec: { token, ...(audiences.length > 0 ? { audiences: [...audiences] } : {}) },
      status: { user: {} },
    };
    const reply = (await this.post(JSON.stringify(body))) as { status?: TokenReviewStatus } | null;
    const status = reply?.status ?? {};
    if (!status.authenticated) return null;
    const u = status.user ?? {};
    if (typeof u.username !== 'string' || u.username === '')
      throw new Error('webhook: the TokenReview reply has no user name');
    // Kubernetes: a reply without audiences means the server's own (implicit) audiences.
    const valid = status.audiences && status.audiences.length > 0 ? status.audiences : this.o.apiAudiences;
    const matched = audiences.filter((a) => valid.includes(a));
    if (audiences.length > 0 && matched.length === 0) return null;
    const user: UserInfo = {
      name: u.username,
      groups: Array.isArray(u.groups) ? u.groups.filter((g) => typeof g === 'string') : [],
    };
    if (typeof u.uid === 'string' && u.uid !== '') user.uid = u.uid;
    if (u.extra && typeof u.extra === 'object' && Object.keys(u.extra).length > 0) user.extra = u.extra;
    return { user, audiences: matched };
  }

  private post(body: string): Promise<unknown> {
    const t = this.o.target;
    const url = new URL(t.server);
    const send = url.protocol === 'http:' ? httpRequest : httpsRequest;
    return new Promise((resolve, reject) => {
      const headers: Record<string, string> = {
        'content-type': 'application/json',
        accept: 'application/json',
        'content-length': String(Buffer.byteLength(body)),
      };
      if (t.token) headers.authorization = `Bearer ${t.token}`;
      const req = send(
        url,
        {
          method: 'POST',
          headers,
          timeout: this.o.timeoutMs ?? 30_000,
          ...(url.protocol === 'https:'
            ? { ca: t.caPem, cert: t.certPem, key: t.keyPem, rejectUnauthorized: !t.insecureSkipTlsVerify }
            : {}),
        },
        (res) => {
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (c: Buffer) => {
            size += c.length;
            if (size > MAX_BYTES) req.destroy(new Error('webhook: reply larger than 1 MiB'));
            else chunks.push(c);
          });
          res.on('error', reject);
          res.on('end', () => {
            const code = res.statusCode ?? 0;
            if (code < 200 || code > 299) {
              reject(new Error(`webhook: ${t.server} answered ${code}`));
              return;
            }
            try {
              resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')));
            } catch (e) {
              reject(new Error(`webhook: the reply is not JSON: ${(e as Error).message}`));
            }
          });
        },
      );
      req.on('timeout', () => req.destroy(new Error(`webhook: ${t.server} timed out`)));
      req.on('error', (e) => reject(new Error(`webhook: ${e.message}`)));
      req.end(body);
    });
  }
}
