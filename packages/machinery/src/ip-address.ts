import { isIP } from 'node:net';

/** An IPv4 or IPv6 address as a number (IPv6's trailing dotted quad included), or undefined when it is not one. */
export function ipToBigInt(ip: string): bigint | undefined {
  const family = isIP(ip);
  if (family === 4) return ip.split('.').reduce((n, part) => (n << 8n) | BigInt(Number(part)), 0n);
  if (family !== 6) return undefined;
  let text = ip;
  // A trailing dotted quad (::ffff:1.2.3.4) stands for the last two groups.
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const v4 = ipToBigInt(dotted[1] as string) ?? 0n;
    text = `${text.slice(0, dotted.index)}${(v4 >> 16n).toString(16)}:${(v4 & 0xffffn).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  const groups =
    tail === undefined ? left : [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right];
  return groups.reduce((n, g) => (n << 16n) | BigInt(parseInt(g, 16)), 0n);
}

/** An address as Go's net.IP.String prints it (IPv6 in RFC 5952's shortest form). */
export function formatIp(ip: bigint, family: 4 | 6): string {
  if (family === 4) return [24n, 16n, 8n, 0n].map((shift) => String((ip >> shift) & 0xffn)).join('.');
  const groups = Array.from({ length: 8 }, (_, i) => Number((ip >> BigInt(112 - 16 * i)) & 0xffffn));
  // The longest run of two or more zero groups (the first of equal runs) becomes `::`.
  let bestStart = -1;
  let bestLen = 1;
  for (let i = 0; i < 8;) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen) {
      bestStart = i;
      bestLen = j - i;
    }
    i = j;
  }
  const hex = (g: number[]): string => g.map((n) => n.toString(16)).join(':');
  if (bestStart < 0) return hex(groups);
  return `${hex(groups.slice(0, bestStart))}::${hex(groups.slice(bestStart + bestLen))}`;
}
