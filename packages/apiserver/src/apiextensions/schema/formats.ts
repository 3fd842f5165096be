/**
 * String formats Kubernetes validates in custom resources (apiextensions-apiserver's
 * supportedFormats, checked with kube-openapi's strfmt registry). Any other format, and every
 * format on a non-string value (`int32`, `int64`, `float`, `double`), is not validated: Kubernetes
 * strips it from the schema before validating. Names are compared with `-` removed
 * (`date-time` is `datetime`).
 */
import { isBase64 } from '@svc/machinery';

type Check = (s: string) => boolean;

const UUID = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;
const UUID3 = /^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;
const UUID4 = /^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$/i;
const UUID5 = /^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$/i;
const HOSTNAME =
  /^([a-zA-Z0-9\p{S}\p{L}]((-?[a-zA-Z0-9\p{S}\p{L}]{0,62})?)|([a-zA-Z0-9\p{S}\p{L}](([a-zA-Z0-9\-\p{S}\p{L}]{0,61}[a-zA-Z0-9\p{S}\p{L}])?)(\.)){1,}([a-zA-Z\p{L}]){2,63})$/u;
const GO_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})$/;
const BYTE = 0xff;
const RGB_PART = String.raw`\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*`;
const RGB = new RegExp(`^rgb\\(${RGB_PART},${RGB_PART},${RGB_PART}\\)$`);
const CREDIT_CARD =
  /^(?:4[0-9]{12}(?:[0-9]{3})?|5[1-5][0-9]{14}|(222[1-9]|22[3-9][0-9]|2[3-6][0-9]{2}|27[01][0-9]|2720)[0-9]{12}|6(?:011|5[0-9][0-9])[0-9]{12}|3[47][0-9]{13}|3(?:0[0-5]|[68][0-9])[0-9]{11}|(?:2131|1800|35\d{3})\d{11}|6[27][0-9]{14})$/;

/** Go's net.ParseIP for IPv4 (leading zeros allowed, as ParseIPSloppy). */
function parseIPv4(s: string): number[] | undefined {
  const parts = s.split('.');
  if (parts.length !== 4) return undefined;
  const out: number[] = [];
  for (const p of parts) {
    if (!/^[0-9]{1,3}$/.test(p) || Number(p) > BYTE) return undefined;
    out.push(Number(p));
  }
  return out;
}

/** Go's net.ParseIP for IPv6 (an IPv4 tail allowed, no zone). */
function isIPv6Text(s: string): boolean {
  const halves = s.split('::');
  if (halves.length > 2) return false;
  const groups = (h: string): string[] | undefined => (h === '' ? [] : h.split(':'));
  const head = groups(halves[0] ?? '');
  const tail = halves.length === 2 ? groups(halves[1] ?? '') : [];
  if (!head || !tail) return false;
  const all = [...head, ...tail];
  let count = 0;
  for (let i = 0; i < all.length; i++) {
    const g = all[i] ?? '';
    if (i === all.length - 1 && g.includes('.')) {
      if (!parseIPv4(g)) return false;
      count += 2;
    } else if (/^[0-9a-fA-F]{1,4}$/.test(g)) {
      count += 1;
    } else {
      return false;
    }
  }
  return halves.length === 2 ? count < 8 : count === 8;
}

function isIP(s: string): boolean {
  return s.includes(':') ? isIPv6Text(s) : parseIPv4(s) !== undefined;
}

function isCIDR(s: string): boolean {
  const slash = s.indexOf('/');
  if (slash < 0) return false;
  const ip = s.slice(0, slash);
  const bits = s.slice(slash + 1);
  if (!/^[0-9]{1,3}$/.test(bits) || (bits.length > 1 && bits.startsWith('0'))) return false;
  if (ip.includes(':')) return isIPv6Text(ip) && Number(bits) <= 128;
  return parseIPv4(ip) !== undefined && Number(bits) <= 32;
}

/** Go's net.ParseMAC: 6, 8 or 20 octets, colon or dash separated, or dotted 4-digit groups. */
function isMAC(s: string): boolean {
  const sizes = [6, 8, 20];
  for (const sep of [':', '-']) {
    const parts = s.split(sep);
    if (sizes.includes(parts.length) && parts.every((p) => /^[0-9a-fA-F]{2}$/.test(p))) return true;
  }
  const dotted = s.split('.');
  return sizes.includes(dotted.length * 2) && dotted.every((p) => /^[0-9a-fA-F]{4}$/.test(p));
}

/** Go's time.Parse("2006-01-02", s). */
function isDate(s: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(s);
  if (!m) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (mo < 1 || mo > 12 || d < 1) return false;
  const leap = y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0);
  const days = mo === 2 ? (leap ? 29 : 28) : [4, 6, 9, 11].includes(mo) ? 30 : 31;
  return d <= days;
}

/** kube-openapi's IsDateTime: a date, `t`, then a time with a zone, compared case-insensitively. */
function isDateTime(s: string): boolean {
  if (s.length < 4) return false;
  const parts = s.toLowerCase().split('t');
  if (parts.length < 2 || !isDate(parts[0] ?? '')) return false;
  const m = /^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$/.exec(parts[1] ?? '');
  return !!m && (m[1] ?? '') <= '23' && (m[2] ?? '') <= '59' && (m[3] ?? '') <= '59';
}

/** Go's time.ParseDuration, else strfmt's `<n> <unit>` form (`3 days`, `1 hour`). */
export function isDuration(s: string): boolean {
  const go = /^[-+]?(([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|ms|s|m|h))+$/;
  if (s === '0' || go.test(s)) return true;
  const units = [
    ['ns', 'nano'],
    ['us', 'µs', 'micro'],
    ['ms', 'milli'],
    ['s', 'sec'],
    ['m', 'min'],
    ['h', 'hr', 'hour'],
    ['d', 'day'],
    ['w', 'wk', 'week'],
  ];
  for (const m of s.matchAll(/(\d+)\s*([A-Za-zµ]+)/g)) {
    const unit = (m[2] ?? '').trim().toLowerCase();
    const known = units.some((vs) =>
      vs.some((v, i) => (i === vs.length - 1 && unit.startsWith(v)) || v.toLowerCase() === unit),
    );
    if (known) return true;
  }
  return false;
}

function isbn10(s: string): boolean {
  const d = s.replace(/[\s-]/g, '');
  if (!/^(?:[0-9]{9}X|[0-9]{10})$/.test(d)) return false;
  let sum = 0;
  for (let i = 0; i < 9; i++) sum += (i + 1) * Number(d[i]);
  sum += d[9] === 'X' ? 100 : 10 * Number(d[9]);
  return sum % 11 === 0;
}

function isbn13(s: string): boolean {
  const d = s.replace(/[\s-]/g, '');
  if (!/^[0-9]{13}$/.test(d)) return false;
  let sum = 0;
  for (let i = 0; i < 12; i++) sum += Number(d[i]) * (i % 2 === 0 ? 1 : 3);
  return (10 - (sum % 10)) % 10 === Number(d[12]);
}

function isCreditCard(s: string): boolean {
  const d = s.replace(/[^0-9]/g, '');
  if (!CREDIT_CARD.test(d)) return false;
  let sum = 0;
  let double = false;
  for (let i = d.length - 1; i >= 0; i--) {
    let n = Number(d[i]);
    if (double) n = n * 2 > 9 ? n * 2 - 9 : n * 2;
    sum += n;
    double = !double;
  }
  return sum % 10 === 0;
}

/** Go's net/mail.ParseAddress, simplified: `local@domain`, optionally as `Name <local@domain>`. */
function isEmail(s: string): boolean {
  const m = /^(?:[^<>]*<([^<>]+)>|([^<>]+))$/.exec(s.trim());
  const addr = (m?.[1] ?? m?.[2] ?? '').trim();
  return /^[^\s@"(),:;<>[\\\]]+@[^\s@"(),:;<>[\\\]]+$/.test(addr);
}

/** Go's url.ParseRequestURI: an absolute URI or an absolute path, no spaces or control characters. */
function isRequestURI(s: string): boolean {
  // eslint-disable-next-line no-control-regex -- control characters are what Go rejects
  if (s === '' || /[\s\x00-\x1f\x7f]/.test(s)) return false;
  return s.startsWith('/') || /^[a-zA-Z][a-zA-Z0-9+.-]*:/.test(s);
}

function isHostname(s: string): boolean {
  return HOSTNAME.test(s) && s.length <= 255 && s.split('.').every((p) => p.length <= 63);
}

const FORMATS: Record<string, Check> = {
  bsonobjectid: (s) => /^[0-9a-fA-F]{24}$/.test(s),
  uri: isRequestURI,
  email: isEmail,
  hostname: isHostname,
  ipv4: (s) => isIP(s) && s.includes('.'),
  ipv6: (s) => isIP(s) && s.includes(':'),
  cidr: isCIDR,
  mac: isMAC,
  uuid: (s) => UUID.test(s),
  uuid3: (s) => UUID3.test(s),
  uuid4: (s) => UUID4.test(s),
  uuid5: (s) => UUID5.test(s),
  isbn: (s) => isbn10(s) || isbn13(s),
  isbn10,
  isbn13,
  creditcard: isCreditCard,
  ssn: (s) => /^\d{3}[- ]?\d{2}[- ]?\d{4}$/.test(s),
  hexcolor: (s) => /^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/.test(s),
  rgbcolor: (s) => RGB.test(s),
  byte: (s) => GO_BASE64.test(s) && isBase64(s),
  password: () => true,
  date: isDate,
  duration: isDuration,
  datetime: isDateTime,
};

/** The check for `format`, or undefined when Kubernetes does not validate that format. */
export function formatCheck(format: string | undefined): Check | undefined {
  if (!format) return undefined;
  return FORMATS[format.replace(/-/g, '')];
}
