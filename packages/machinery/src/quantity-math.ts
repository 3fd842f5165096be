// Exact resource quantities (Kubernetes' resource.Quantity): parsing, arithmetic, comparison and
// the canonical text Kubernetes writes back (`0.5` → `500m`, `1024Mi` → `1Gi`, `1500` → `1500`).

import { QuantityError } from './quantity.js';

/** How a quantity is written back: `DecimalSI` (`k`, `M`, `m`...), `BinarySI` (`Ki`, `Mi`...) or `DecimalExponent` (`1e3`). */
export type QuantityFormat = 'DecimalSI' | 'BinarySI' | 'DecimalExponent';

const BINARY_SUFFIXES: Record<string, number> = { Ki: 1, Mi: 2, Gi: 3, Ti: 4, Pi: 5, Ei: 6 };
const DECIMAL_SUFFIXES: Record<string, number> = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const DECIMAL_BY_EXPONENT = new Map(Object.entries(DECIMAL_SUFFIXES).map(([k, v]) => [v, k]));
const BINARY_BY_POWER = ['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'];
const QUANTITY = /^([+-]?)(\d*)(?:\.(\d*))?(?:(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)|[eE]([+-]?\d+))?$/;

/** Kubernetes keeps nothing finer than nano units (it rounds up, away from zero). */
const MIN_SCALE = -9;

function pow10(n: number): bigint {
  return 10n ** BigInt(n);
}

/** `n / d` rounded away from zero. */
function divideUp(n: bigint, d: bigint): bigint {
  const q = n / d;
  return n % d === 0n ? q : n < 0n ? q - 1n : q + 1n;
}

/**
 * An exact quantity: `digits × 10^scale`, with the format it is written back in. Immutable;
 * arithmetic keeps the left operand's format unless it is zero (then the right one's), as
 * Kubernetes' `Add` and `Sub` do.
 */
export class Quantity {
  private constructor(
    readonly digits: bigint,
    readonly scale: number,
    readonly format: QuantityFormat,
  ) {}

  /** Reads `100m`, `1.5Gi`, `1e3`, a JSON number...; throws `QuantityError` for anything else. */
  static parse(text: string | number): Quantity {
    const s = typeof text === 'number' ? String(text) : text.trim();
    const m = QUANTITY.exec(s);
    if (!m || (m[2] === '' && (m[3] ?? '') === '')) {
      throw new QuantityError(
        `quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$': ${JSON.stringify(s)}`,
      );
    }
    const [, sign, int = '', frac = '', suffix, exponent] = m;
    let digits = BigInt(`${int}${frac}` || '0');
    let scale = -frac.length;
    let format: QuantityFormat = 'DecimalSI';
    if (exponent !== undefined) {
      scale += Number(exponent);
      format = 'DecimalExponent';
    } else if (suffix && suffix in BINARY_SUFFIXES) {
      digits *= 1024n ** BigInt(BINARY_SUFFIXES[suffix] ?? 0);
      format = 'BinarySI';
    } else {
      scale += DECIMAL_SUFFIXES[suffix ?? ''] ?? 0;
    }
    if (sign === '-') digits = -digits;
    return new Quantity(digits, scale, format).roundedToNano();
  }

  /** The quantity, or undefined when the text is not one. */
  static tryParse(text: string | number | undefined): Quantity | undefined {
    if (text === undefined) return undefined;
    try {
      return Quantity.parse(text);
    } catch {
      return undefined;
    }
  }

  static of(value: number | bigint, format: QuantityFormat = 'DecimalSI'): Quantity {
    return new Quantity(BigInt(value), 0, format);
  }

  static milli(value: number | bigint, format: QuantityFormat = 'DecimalSI'): Quantity {
    return new Quantity(BigInt(value), -3, format);
  }

  static zero(format: QuantityFormat = 'DecimalSI'): Quantity {
    return new Quantity(0n, 0, format);
  }

  private roundedToNano(): Quantity {
    if (this.scale >= MIN_SCALE) return this;
    return new Quantity(divideUp(this.digits, pow10(MIN_SCALE - this.scale)), MIN_SCALE, this.format);
  }

  /** Both digit strings at the finer of the two scales. */
  private aligned(o: Quantity): [bigint, bigint, number] {
    const scale = Math.min(this.scale, o.scale);
    return [this.digits * pow10(this.scale - scale), o.digits * pow10(o.scale - scale), scale];
  }

  add(o: Quantity): Quantity {
    const [a, b, scale] = this.aligned(o);
    return new Quantity(a + b, scale, this.isZero() ? o.format : this.format);
  }

  sub(o: Quantity): Quantity {
    const [a, b, scale] = this.aligned(o);
    return new Quantity(a - b, scale, this.isZero() ? o.format : this.format);
  }

  neg(): Quantity {
    return new Quantity(-this.digits, this.scale, this.format);
  }

  cmp(o: Quantity): -1 | 0 | 1 {
    const [a, b] = this.aligned(o);
    return a < b ? -1 : a > b ? 1 : 0;
  }

  sign(): -1 | 0 | 1 {
    return this.digits < 0n ? -1 : this.digits > 0n ? 1 : 0;
  }

  isZero(): boolean {
    return this.digits === 0n;
  }

  /** `ceil(q × 10^-scale)` away from zero, as Kubernetes' ScaledValue. */
  scaledValue(scale: number): bigint {
    const shift = this.scale - scale;
    return shift >= 0 ? this.digits * pow10(shift) : divideUp(this.digits, pow10(-shift));
  }

  /** Whole units, rounded up (Kubernetes' `Value()`). */
  value(): bigint {
    return this.scaledValue(0);
  }

  /** Thousandths, rounded up (Kubernetes' `MilliValue()`). */
  milliValue(): bigint {
    return this.scaledValue(-3);
  }

  /** Rounded up to whole units (Kubernetes' `RoundUp(0)`), keeping the format. */
  roundUp(): Quantity {
    return this.scale >= 0 ? this : new Quantity(this.value(), 0, this.format);
  }

  /** Kubernetes' canonical text (`String()`): what the API writes back for this quantity. */
  toString(): string {
    if (this.digits === 0n) return '0';
    let format = this.format;
    if (format === 'BinarySI') {
      const v = this.aligned(Quantity.of(1024));
      const integral = this.scale >= 0 || this.digits % pow10(-this.scale) === 0n;
      if ((v[0] > -v[1] && v[0] < v[1]) || !integral) format = 'DecimalSI';
    }
    if (format === 'BinarySI') {
      let n = this.value();
      let power = 0;
      while (n % 1024n === 0n && power < BINARY_BY_POWER.length - 1) {
        n /= 1024n;
        power++;
      }
      return `${n}${BINARY_BY_POWER[power] ?? ''}`;
    }
    let n = this.digits;
    let exponent = this.scale;
    while (n % 10n === 0n) {
      n /= 10n;
      exponent++;
    }
    const rest = ((exponent % 3) + 3) % 3;
    n *= 10n ** BigInt(rest);
    exponent -= rest;
    if (format === 'DecimalExponent') return exponent === 0 ? `${n}` : `${n}e${exponent}`;
    const suffix = DECIMAL_BY_EXPONENT.get(exponent);
    return suffix === undefined ? `${n}e${exponent}` : `${n}${suffix}`;
  }

  toJSON(): string {
    return this.toString();
  }
}

/** The canonical text of a written quantity; the text itself when it is not one (validation reports it). */
export function canonicalQuantity(text: string | number): string {
  const q = Quantity.tryParse(text);
  return q ? q.toString() : String(text);
}
