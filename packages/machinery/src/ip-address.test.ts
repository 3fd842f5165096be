import { formatIp, ipToBigInt } from './ip-address.js';

describe('ipToBigInt and formatIp', () => {
  it.each([
    ['10.96.0.1', 4, 0x0a600001n],
    ['0.0.0.0', 4, 0n],
    ['255.255.255.255', 4, 0xffffffffn],
    ['::', 6, 0n],
    ['::1', 6, 1n],
    ['fd00::', 6, 0xfd00n << 112n],
    ['2001:db8::8:800:200c:417a', 6, 0x20010db80000000000080800200c417an],
  ] as const)('%s round-trips', (text, family, n) => {
    expect(ipToBigInt(text)).toBe(n);
    expect(formatIp(n, family)).toBe(text);
  });

  it('writes IPv6 as Go does: the first longest zero run shortened, a single zero group kept', () => {
    expect(formatIp(ipToBigInt('2001:0db8:0000:0000:0001:0000:0000:0001') ?? -1n, 6)).toBe('2001:db8::1:0:0:1');
    expect(formatIp(ipToBigInt('2001:db8:0:1:1:1:1:1') ?? -1n, 6)).toBe('2001:db8:0:1:1:1:1:1');
    expect(formatIp(ipToBigInt('1:0:0:2:0:0:0:3') ?? -1n, 6)).toBe('1:0:0:2::3');
  });

  it('reads a trailing dotted quad as the last two groups', () => {
    expect(ipToBigInt('::ffff:1.2.3.4')).toBe(0xffff01020304n);
  });

  it('answers undefined for what is not an address', () => {
    for (const bad of ['', '10.0.0', '10.0.0.256', 'fd00:::1', 'host', '10.0.0.1/8'])
      expect(ipToBigInt(bad)).toBeUndefined();
  });
});
