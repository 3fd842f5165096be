import { formatCheck, isDuration } from './formats.js';

const ok = (format: string, s: string) => formatCheck(format)?.(s);

describe('formats Kubernetes validates', () => {
  it.each<[string, string[], string[]]>([
    ['date-time', ['2024-01-02T03:04:05Z', '2024-01-02t03:04:05.5+01:00'], ['2024-01-02', '2024-13-01T00:00:00Z', 'x']],
    ['date', ['2024-02-29'], ['2023-02-29', '2024-1-1']],
    ['ipv4', ['10.0.0.1', '010.0.0.1', '::ffff:1.2.3.4'], ['10.0.0', '1.2.3.256', '::1']],
    ['ipv6', ['::1', 'fe80::1', '2001:db8::1:2:3', '::ffff:1.2.3.4'], ['1.2.3.4', ':::', 'fe80::1%eth0']],
    ['cidr', ['10.0.0.0/8', '2001:db8::/32'], ['10.0.0.0', '10.0.0.0/33', '::/129']],
    ['uuid', ['123e4567-e89b-12d3-a456-426614174000', '123E4567E89B12D3A456426614174000'], ['123']],
    ['uuid4', ['123e4567-e89b-42d3-a456-426614174000'], ['123e4567-e89b-12d3-a456-426614174000']],
    // kube-openapi's hostname pattern allows a dash in a single label only right after its first character.
    ['hostname', ['example.com', 'a', 'm-yhost', 'my-host.example.com'], ['-bad', 'a_b.com', 'ex ample', 'my-host']],
    ['byte', ['aGVsbG8='], ['hello!', '']],
    ['email', ['a@b.c', 'Name <a@b.c>'], ['no-at', 'a@']],
    ['mac', ['00:00:5e:00:53:01', '00-00-5e-00-53-01', '0000.5e00.5301'], ['00:00:5e']],
    ['uri', ['https://x/y', '/abs/path'], ['relative/path', 'has space']],
    ['duration', ['1h2m', '3 days', '0'], ['forever']],
    ['isbn', ['0321751043', '978-0321751041'], ['0321751044']],
    ['hexcolor', ['#fff', 'A0B1C2'], ['#ffff']],
    ['rgbcolor', ['rgb(1, 2, 255)'], ['rgb(256,0,0)']],
    ['password', ['anything'], []],
  ])('%s', (format, good, bad) => {
    for (const s of good) expect([s, ok(format, s)]).toEqual([s, true]);
    for (const s of bad) expect([s, ok(format, s)]).toEqual([s, false]);
  });

  it('does not validate formats Kubernetes strips (int32, int64, float, double, unknown)', () => {
    for (const f of ['int32', 'int64', 'float', 'double', 'whatever', undefined])
      expect(formatCheck(f)).toBeUndefined();
  });

  it('reads Go and fuzzy durations', () => {
    expect(isDuration('1.5h')).toBe(true);
    expect(isDuration('-2m3s')).toBe(true);
    expect(isDuration('1 hour')).toBe(true);
  });
});
