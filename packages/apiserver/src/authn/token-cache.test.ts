import type { AuthenticationNotes, TokenAuthenticator, TokenAuthResult } from '@svc/component-base';
import { CachedTokenAuthenticator, TOKEN_SUCCESS_CACHE_TTL_MS } from './token-cache.js';

/** Tokens `good-<name>` are user <name>; `bad` is invalid; anything else is not a token it knows. Counts its lookups. */
class Counting implements TokenAuthenticator {
  calls = 0;
  gate: Promise<void> = Promise.resolve();

  async authenticateToken(
    token: string,
    audiences: readonly string[],
    notes?: AuthenticationNotes,
  ): Promise<TokenAuthResult | null> {
    this.calls++;
    await this.gate;
    if (token === 'bad') throw new Error('token is expired');
    if (!token.startsWith('good-')) return null;
    notes?.warnings.push(`looked up ${token}`);
    if (notes) notes.auditAnnotations['example/credential'] = token;
    return { user: { name: token.slice(5), groups: [] }, audiences: [...audiences] };
  }
}

const notes = (): AuthenticationNotes => ({ warnings: [], auditAnnotations: {} });

describe('CachedTokenAuthenticator', () => {
  let clock = 0;
  const make = (inner: TokenAuthenticator): CachedTokenAuthenticator =>
    new CachedTokenAuthenticator(inner, { now: () => clock });
  beforeEach(() => {
    clock = 1_000;
  });

  it('answers a token that authenticated from the cache for 10 s, then asks again', async () => {
    const inner = new Counting();
    const c = make(inner);
    const first = await c.authenticateToken('good-ann', ['api']);
    expect(first?.user.name).toBe('ann');
    clock += TOKEN_SUCCESS_CACHE_TTL_MS - 1;
    expect(await c.authenticateToken('good-ann', ['api'])).toBe(first);
    expect(inner.calls).toBe(1);
    clock += 1;
    expect((await c.authenticateToken('good-ann', ['api']))?.user.name).toBe('ann');
    expect(inner.calls).toBe(2);
  });

  it('keeps tokens and audiences apart', async () => {
    const inner = new Counting();
    const c = make(inner);
    await c.authenticateToken('good-ann', ['api']);
    expect((await c.authenticateToken('good-bob', ['api']))?.user.name).toBe('bob');
    expect((await c.authenticateToken('good-ann', ['api', 'vault']))?.audiences).toEqual(['api', 'vault']);
    // Length-prefixed: the audience list ["a,b"] is not ["a", "b"].
    await c.authenticateToken('good-ann', ['a,b']);
    await c.authenticateToken('good-ann', ['a', 'b']);
    expect(inner.calls).toBe(5);
  });

  it('does not cache tokens it does not know or that fail', async () => {
    const inner = new Counting();
    const c = make(inner);
    expect(await c.authenticateToken('other', ['api'])).toBeNull();
    expect(await c.authenticateToken('other', ['api'])).toBeNull();
    await expect(c.authenticateToken('bad', ['api'])).rejects.toThrow('token is expired');
    await expect(c.authenticateToken('bad', ['api'])).rejects.toThrow('token is expired');
    expect(inner.calls).toBe(4);
  });

  it('lets callers asking at once share one lookup, failed or not', async () => {
    const inner = new Counting();
    let open!: () => void;
    inner.gate = new Promise((r) => (open = r));
    const c = make(inner);
    const good = [1, 2, 3].map(() => c.authenticateToken('good-ann', ['api']));
    const bad = [1, 2].map(() => c.authenticateToken('bad', ['api']));
    open();
    const users = await Promise.all(good);
    expect(users.map((u) => u?.user.name)).toEqual(['ann', 'ann', 'ann']);
    for (const b of bad) await expect(b).rejects.toThrow('token is expired');
    expect(inner.calls).toBe(2);
  });

  it('gives every request answered from the cache the warnings and audit annotations of the lookup', async () => {
    const c = make(new Counting());
    const a = notes();
    const b = notes();
    await c.authenticateToken('good-ann', ['api'], a);
    await c.authenticateToken('good-ann', ['api'], b);
    for (const n of [a, b]) {
      expect(n.warnings).toEqual(['looked up good-ann']);
      expect(n.auditAnnotations).toEqual({ 'example/credential': 'good-ann' });
    }
  });

  it('forgets every answer, and a lookup begun before, when told the authenticators changed', async () => {
    const inner = new Counting();
    const c = make(inner);
    await c.authenticateToken('good-ann', ['api']);
    let open!: () => void;
    inner.gate = new Promise((r) => (open = r));
    const early = c.authenticateToken('good-bob', ['api']);
    c.forget();
    // Asked again after forget: neither the cached ann nor bob's earlier lookup answers.
    const ann = c.authenticateToken('good-ann', ['api']);
    const bob = c.authenticateToken('good-bob', ['api']);
    open();
    await Promise.all([early, ann, bob]);
    expect(inner.calls).toBe(4);
    // The early lookup was not kept; the ones after forget were.
    await c.authenticateToken('good-bob', ['api']);
    await c.authenticateToken('good-ann', ['api']);
    expect(inner.calls).toBe(4);
  });

  it('with a TTL of 0 caches nothing', async () => {
    const inner = new Counting();
    const c = new CachedTokenAuthenticator(inner, { successTtlMs: 0, now: () => clock });
    await c.authenticateToken('good-ann', ['api']);
    await c.authenticateToken('good-ann', ['api']);
    expect(inner.calls).toBe(2);
  });
});
