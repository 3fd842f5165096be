import { CompactSign } from 'jose';
import { serverUrl, verifyDetachedJws } from './discovery.js';

const TOKEN = { id: 'abcdef', secret: '0123456789abcdef' };
const CONTENT = 'apiVersion: v1\nkind: Config\n';

async function sign(o: { content?: string; kid?: string; alg?: string; key?: string } = {}): Promise<string> {
  return new CompactSign(new TextEncoder().encode(o.content ?? CONTENT))
    .setProtectedHeader({ alg: o.alg ?? 'HS256', kid: o.kid ?? TOKEN.id })
    .sign(new TextEncoder().encode(o.key ?? `${TOKEN.id}.${TOKEN.secret}`));
}

const detached = (jws: string): string => {
  const [h, , s] = jws.split('.');
  return `${h ?? ''}..${s ?? ''}`;
};

describe('verifyDetachedJws', () => {
  it("accepts the spec's detached HS256 JWS with the full token as key and the token id as kid", async () => {
    expect(await verifyDetachedJws(detached(await sign()), CONTENT, TOKEN)).toBe(true);
  });

  it('refuses other content, another secret, another kid, another algorithm, and an attached payload', async () => {
    expect(await verifyDetachedJws(detached(await sign()), `${CONTENT} `, TOKEN)).toBe(false);
    expect(await verifyDetachedJws(detached(await sign()), CONTENT, { ...TOKEN, secret: 'ffffffffffffffff' })).toBe(
      false,
    );
    expect(await verifyDetachedJws(detached(await sign({ kid: 'other1' })), CONTENT, TOKEN)).toBe(false);
    expect(
      await verifyDetachedJws(
        detached(await sign({ alg: 'HS512', key: `${TOKEN.id}.${TOKEN.secret}`.repeat(4) })),
        CONTENT,
        TOKEN,
      ),
    ).toBe(false);
    expect(await verifyDetachedJws(await sign(), CONTENT, TOKEN)).toBe(false);
    expect(await verifyDetachedJws('', CONTENT, TOKEN)).toBe(false);
    expect(await verifyDetachedJws('a.b', CONTENT, TOKEN)).toBe(false);
  });

  it('reads host:port as an https URL', () => {
    expect(serverUrl('10.0.0.1:6443')).toBe('https://10.0.0.1:6443');
    expect(serverUrl('https://cp.example:443')).toBe('https://cp.example:443');
  });
});
