import { quantityValue } from '@svc/machinery';

const BINARY: Readonly<Record<string, number>> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };
const DECIMAL: Readonly<Record<string, number>> = { n: -9, u: -6, m: -3, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const QUANTITY = /^([+-]?)(\d*)(?:\.(\d*))?(?:(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)|[eE]([+-]?\d+))?$/;

/** `sign × digits × 10^pow10 × 2^pow2`: a quantity read exactly. */
interface Exact {
  digits: bigint;
  pow10: number;
  pow2: number;
}

/** A quantity (string or JSON number) read exactly; undefined when it is not one. */
function exact(q: unknown): Exact | undefined {
  if (typeof q === 'number') q = String(q);
  if (typeof q !== 'string') return undefined;
  const m = QUANTITY.exec(q.trim());
  if (!m || (m[2] === '' && (m[3] ?? '') === '')) return undefined;
  const [, sign, int = '', frac = '', suffix, exp] = m;
  const digits = BigInt(`${int}${frac}` || '0') * (sign === '-' ? -1n : 1n);
  const pow10 = -frac.length + (exp !== undefined ? Number(exp) : (DECIMAL[suffix ?? ''] ?? 0));
  return { digits, pow10, pow2: BINARY[suffix ?? ''] ?? 0 };
}

function scaledTo(x: Exact, pow10: number, pow2: number): bigint {
  return x.digits * 10n ** BigInt(x.pow10 - pow10) * 2n ** BigInt(x.pow2 - pow2);
}

/** Is `q` a quantity Kubernetes would read. */
export function isQuantity(q: unknown): boolean {
  if (exact(q) === undefined) return false;
  try {
    quantityValue(String(q));
    return true;
  } catch {
    return false;
  }
}

/** -1, 0 or 1 as `a` is less than, equal to or greater than `b` (resource.Quantity's Cmp); a missing or bad quantity is 0. */
export function compareQuantities(a: unknown, b: unknown): number {
  const x = exact(a) ?? { digits: 0n, pow10: 0, pow2: 0 };
  const y = exact(b) ?? { digits: 0n, pow10: 0, pow2: 0 };
  const pow10 = Math.min(x.pow10, y.pow10);
  const pow2 = Math.min(x.pow2, y.pow2);
  const l = scaledTo(x, pow10, pow2);
  const r = scaledTo(y, pow10, pow2);
  return l < r ? -1 : l > r ? 1 : 0;
}

/** The sign of a quantity: -1, 0 or 1 (0 for a missing or bad one). */
export function quantitySign(q: unknown): number {
  return compareQuantities(q, 0);
}
