import { isIPv4, isIPv6 } from 'node:net';
import { fieldErrors, type FieldError } from '@svc/api';

/** Go's netutils.ParseIPSloppy: an IPv4 address (leading zeros allowed) as four octets, or null. */
function ipv4Octets(value: string): number[] | null {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(value);
  if (!m) return null;
  const octets = m.slice(1).map(Number);
  return octets.every((o) => o <= 255) ? octets : null;
}

/** The address family Go's sloppy parser gives `value`, or null when it is not an IP address. */
export function ipFamily(value: string): 4 | 6 | null {
  if (ipv4Octets(value)) return 4;
  if (isIPv6(value)) return 6;
  return null;
}

/** The first 16 bits of an IPv6 address (`fe80::1` → 0xfe80). */
function firstHextet(value: string): number {
  const head = value.split('::')[0]?.split(':')[0] ?? '';
  return head === '' ? 0 : parseInt(head, 16);
}

/** An IPv4-mapped IPv6 address (`::ffff:127.0.0.1`) as its IPv4 octets. */
function mappedIpv4(value: string): number[] | null {
  const m = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(value);
  return m?.[1] && isIPv4(m[1]) ? ipv4Octets(m[1]) : null;
}

/**
 * Kubernetes' ValidateNonSpecialIP: an endpoint address may not be unspecified, loopback,
 * link-local or link-local multicast (messages as Kubernetes 1.32 words them).
 */
export function validateNonSpecialIp(value: string, path: string): FieldError[] {
  const family = ipFamily(value);
  if (family === null) return [fieldErrors.invalid(path, value, 'must be a valid IP address')];
  const v4 = family === 4 ? ipv4Octets(value) : mappedIpv4(value);
  const errs: FieldError[] = [];
  const unspecified = v4 ? v4.every((o) => o === 0) : /^[0:]+$/.test(value);
  const loopback = v4 ? v4[0] === 127 : /^(0{0,4}:){2,7}0{0,3}1$|^::1$/.test(value);
  const hextet = v4 ? -1 : firstHextet(value);
  const linkLocal = v4 ? v4[0] === 169 && v4[1] === 254 : (hextet & 0xffc0) === 0xfe80;
  const linkLocalMulticast = v4 ? v4[0] === 224 && v4[1] === 0 && v4[2] === 0 : (hextet & 0xff0f) === 0xff02;
  if (unspecified) errs.push(fieldErrors.invalid(path, value, `may not be unspecified (${value})`));
  if (loopback) errs.push(fieldErrors.invalid(path, value, 'may not be in the loopback range (127.0.0.0/8, ::1/128)'));
  if (linkLocal)
    errs.push(fieldErrors.invalid(path, value, 'may not be in the link-local range (169.254.0.0/16, fe80::/10)'));
  if (linkLocalMulticast)
    errs.push(
      fieldErrors.invalid(path, value, 'may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)'),
    );
  return errs;
}
