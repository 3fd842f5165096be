import { createHmac, randomBytes } from 'node:crypto';
import {
  addAuthenticationAuditAnnotation,
  addAuthenticationWarning,
  type AuthenticationNotes,
  type TokenAuthenticator,
  type TokenAuthResult,
} from '@svc/component-base';

/** How long a token that authenticated stays authenticated without asking again (Kubernetes' 10 s). */
export const TOKEN_SUCCESS_CACHE_TTL_MS = 10_000;
const MAX_ENTRIES = 65_536;

interface Answer {
  result: TokenAuthResult | null;
  /** Thrown by the authenticators: not cached, but shared by the callers that waited on it. */
  error?: unknown;
  notes: AuthenticationNotes;
}

export interface CachedTokenAuthenticatorOptions {
  successTtlMs?: number;
  /** The clock (ms) that ages cached answers; `performance.now` by default. */
  now?: () => number;
}

/**
 * The bearer-token authenticators behind Kubernetes' token cache: a token that authenticated
 * for a set of audiences is taken as the same user for the next 10 s without verifying its
 * signature or looking up its service account again, and callers asking about one token at
 * once share one lookup. Failures and invalid tokens are not cached (Kubernetes' failure TTL
 * is 0). Audit annotations and warnings the lookup noted are given again to every request
 * answered from it. Tokens are kept only as keyed hashes. Results are shared: never mutate.
 */
export class CachedTokenAuthenticator implements TokenAuthenticator {
  private readonly key = randomBytes(32);
  private readonly cache = new Map<string, { until: number; answer: Answer }>();
  private readonly inFlight = new Map<string, Promise<Answer>>();
  /** Bumped by `forget`: a lookup begun before it is neither kept nor shared after it. */
  private generation = 0;
  private readonly ttlMs: number;
  private readonly now: () => number;

  constructor(
    private readonly inner: TokenAuthenticator,
    o: CachedTokenAuthenticatorOptions = {},
  ) {
    this.ttlMs = o.successTtlMs ?? TOKEN_SUCCESS_CACHE_TTL_MS;
    this.now = o.now ?? (() => performance.now());
  }

  /**
   * Drops every cached answer, for when the authenticators themselves changed (a reloaded
   * `--authentication-config`): the next request with any token is verified again.
   */
  forget(): void {
    this.generation++;
    this.cache.clear();
    this.inFlight.clear();
  }

  async authenticateToken(
    token: string,
    audiences: readonly string[],
    notes?: AuthenticationNotes,
  ): Promise<TokenAuthResult | null> {
    const key = this.keyOf(token, audiences);
    const hit = this.cache.get(key);
    let answer: Answer;
    if (hit && hit.until > this.now()) answer = hit.answer;
    else {
      if (hit) this.cache.delete(key);
      let pending = this.inFlight.get(key);
      if (!pending) {
        const p: Promise<Answer> = this.lookUp(key, token, audiences).finally(() => {
          if (this.inFlight.get(key) === p) this.inFlight.delete(key);
        });
        pending = p;
        this.inFlight.set(key, p);
      }
      answer = await pending;
    }
    for (const w of answer.notes.warnings) addAuthenticationWarning(notes, w);
    for (const [k, value] of Object.entries(answer.notes.auditAnnotations))
      addAuthenticationAuditAnnotation(notes, { key: k, value });
    if (answer.error !== undefined) throw answer.error;
    return answer.result;
  }

  private async lookUp(key: string, token: string, audiences: readonly string[]): Promise<Answer> {
    const notes: AuthenticationNotes = { warnings: [], auditAnnotations: {} };
    const generation = this.generation;
    try {
      const result = await this.inner.authenticateToken(token, audiences, notes);
      const answer: Answer = { result, notes };
      if (result && this.ttlMs > 0 && generation === this.generation) this.remember(key, answer);
      return answer;
    } catch (error) {
      return { result: null, error, notes };
    }
  }

  private remember(key: string, answer: Answer): void {
    if (this.cache.size >= MAX_ENTRIES) {
      const now = this.now();
      for (const [k, v] of this.cache) if (v.until <= now) this.cache.delete(k);
      // Still full of live entries: the oldest goes (Map keeps insertion order).
      if (this.cache.size >= MAX_ENTRIES) this.cache.delete(this.cache.keys().next().value ?? '');
    }
    this.cache.set(key, { until: this.now() + this.ttlMs, answer });
  }

  /** A keyed hash of the token and the audiences, each length-prefixed (no two inputs collide by concatenation). */
  private keyOf(token: string, audiences: readonly string[]): string {
    const h = createHmac('sha256', this.key);
    const part = (s: string): void => {
      h.update(`${Buffer.byteLength(s)}:`);
      h.update(s);
    };
    part(token);
    h.update(`${audiences.length};`);
    for (const a of audiences) part(a);
    return h.digest('base64');
  }
}
