import { bootstrapTokenSecretType } from '@svc/api';
import {
  alignColumns,
  defaultNodeTokenGroup,
  generateToken,
  parseToken,
  shortHumanDuration,
  tokenFromSecret,
  tokenSecret,
  tokenTable,
  validateGroups,
  validateUsages,
} from './token.js';

const decode = (data: Record<string, string>): Record<string, string> =>
  Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]));

describe('bootstrap tokens', () => {
  it("generates the spec's format and parses it back; other shapes are refused with Kubernetes' message", () => {
    const seen = new Set<string>();
    for (let i = 0; i < 50; i++) {
      const t = generateToken();
      expect(t).toMatch(/^[a-z0-9]{6}\.[a-z0-9]{16}$/);
      seen.add(t);
    }
    expect(seen.size).toBe(50);
    expect(parseToken('abcdef.0123456789abcdef')).toEqual({ id: 'abcdef', secret: '0123456789abcdef' });
    expect(() => parseToken('ABCDEF.0123456789abcdef')).toThrow(
      'the bootstrap token "ABCDEF.0123456789abcdef" was not of the form "^([a-z0-9]{6})\\.([a-z0-9]{16})$"',
    );
    expect(() => parseToken('abcdef.short')).toThrow(/was not of the form/);
  });

  it('validates usages and extra groups as Kubernetes does', () => {
    expect(() => validateUsages(['signing', 'authentication'])).not.toThrow();
    expect(() => validateUsages(['signing', 'root', 'fly'])).toThrow(
      'invalid bootstrap token usage string: fly,root, valid usage options: signing,authentication',
    );
    expect(() => validateGroups([defaultNodeTokenGroup(), 'system:bootstrappers:worker-1'])).not.toThrow();
    expect(defaultNodeTokenGroup()).toBe('system:bootstrappers:svcadm:default-node-token');
    for (const g of [
      'system:masters',
      'system:bootstrappers:',
      'system:bootstrappers:Upper',
      'system:bootstrappers:x-',
    ]) {
      expect(() => validateGroups([g])).toThrow(
        `bootstrap group ${JSON.stringify(g)} is invalid (must match \\Asystem:bootstrappers:[a-z0-9:-]{0,255}[a-z0-9]\\z)`,
      );
    }
  });

  it("stores a token in a Secret of the bootstrap type with the spec's data keys, and reads it back", () => {
    const expires = Date.parse('2031-02-03T04:05:06.789Z');
    const s = tokenSecret({
      id: 'abcdef',
      secret: '0123456789abcdef',
      description: 'for node-1',
      expires,
      usages: ['signing', 'authentication'],
      groups: ['system:bootstrappers:a', 'system:bootstrappers:b'],
    });
    expect(s.metadata).toEqual({ name: 'bootstrap-token-abcdef', namespace: 'svc-system' });
    expect(s.type).toBe(bootstrapTokenSecretType());
    expect(decode(s.data as Record<string, string>)).toEqual({
      'token-id': 'abcdef',
      'token-secret': '0123456789abcdef',
      description: 'for node-1',
      expiration: '2031-02-03T04:05:06Z',
      'usage-bootstrap-signing': 'true',
      'usage-bootstrap-authentication': 'true',
      'auth-extra-groups': 'system:bootstrappers:a,system:bootstrappers:b',
    });
    expect(tokenFromSecret(s)).toEqual({
      id: 'abcdef',
      secret: '0123456789abcdef',
      description: 'for node-1',
      expires: Date.parse('2031-02-03T04:05:06Z'),
      usages: ['authentication', 'signing'],
      groups: ['system:bootstrappers:a', 'system:bootstrappers:b'],
    });
    const forever = tokenSecret({ id: 'abcdef', secret: '0123456789abcdef', usages: ['signing'], groups: [] });
    expect(Object.keys(decode(forever.data as Record<string, string>)).sort()).toEqual([
      'token-id',
      'token-secret',
      'usage-bootstrap-signing',
    ]);
    expect(tokenFromSecret({ ...s, type: 'Opaque' })).toBeUndefined();
    expect(tokenFromSecret({ ...s, metadata: { name: 'bootstrap-token-other1' } })).toBeUndefined();
  });

  it("prints kubeadm's table: short TTLs, RFC 3339 expiry, placeholders, tabwriter padding", () => {
    expect(
      [59_000, 90_000, 3 * 3600_000 + 5, 47 * 3600_000, 50 * 3600_000, 800 * 24 * 3600_000, -500, -5000].map(
        shortHumanDuration,
      ),
    ).toEqual(['59s', '1m', '3h', '47h', '2d', '2y', '0s', '<invalid>']);
    const now = Date.parse('2030-01-01T00:00:00Z');
    const out = tokenTable(
      [
        {
          id: 'abcdef',
          secret: '0123456789abcdef',
          expires: now + 23 * 3600_000 + 59 * 60_000,
          usages: ['authentication', 'signing'],
          groups: [defaultNodeTokenGroup()],
        },
        { id: 'zzzzzz', secret: '0123456789abcdef', usages: [], groups: [], description: 'forever' },
      ],
      now,
    );
    expect(out).toBe(
      [
        'TOKEN                     TTL         EXPIRES                USAGES                   DESCRIPTION   EXTRA GROUPS',
        'abcdef.0123456789abcdef   23h         2030-01-01T23:59:00Z   authentication,signing   <none>        system:bootstrappers:svcadm:default-node-token',
        'zzzzzz.0123456789abcdef   <forever>   <never>                <none>                   forever       <none>',
        '',
      ].join('\n'),
    );
    expect(
      alignColumns([
        ['A', 'B'],
        ['a', 'b'],
      ]),
    ).toBe('A         B\na         b\n');
  });
});
