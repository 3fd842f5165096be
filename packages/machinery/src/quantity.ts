// Resource quantities (Kubernetes' resource.Quantity) read exactly: `100m`, `1.5`, `128Mi`, `1e3`, `2k`.

const BINARY: Record<string, number> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };
const DECIMAL: Record<string, number> = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const QUANTITY = /^([+-]?)(\d*)(?:\.(\d*))?(?:(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)|[eE]([+-]?\d+))?$/;

/** Thrown for text that is not a quantity. */
export class QuantityError extends Error {}

/** `q × 10^scale`, rounded up (away from zero for negatives, as Kubernetes' `ScaledValue`). */
function scaled(q: string, scale: number): number {
  const m = QUANTITY.exec(q.trim());
  if (!m || (m[2] === '' && (m[3] ?? '') === '')) {
    throw new QuantityError(
      `quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$': ${JSON.stringify(q)}`,
    );
  }
  const [, sign, int = '', frac = '', suffix, exp] = m;
  let digits = BigInt(`${int}${frac}` || '0');
  const pow10 = -frac.length + scale + (exp !== undefined ? Number(exp) : (DECIMAL[suffix ?? ''] ?? 0));
  if (suffix && suffix in BINARY) digits *= 2n ** BigInt(BINARY[suffix] ?? 0);
  if (pow10 >= 0) digits *= 10n ** BigInt(pow10);
  else {
    const d = 10n ** BigInt(-pow10);
    digits = (digits + d - 1n) / d;
  }
  return Number(sign === '-' ? -digits : digits);
}

/** The quantity in whole units, rounded up (Kubernetes' `Value()`): `1.5Gi` → 1610612736, `100m` → 1. */
export function quantityValue(q: string): number {
  return scaled(q, 0);
}

/** The quantity in thousandths, rounded up (Kubernetes' `MilliValue()`): `0.1` → 100, `2` → 2000. */
export function quantityMilliValue(q: string): number {
  return scaled(q, 3);
}
