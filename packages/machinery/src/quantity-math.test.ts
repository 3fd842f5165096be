import { Quantity, canonicalQuantity } from './quantity-math.js';
import { QuantityError } from './quantity.js';

describe('Quantity', () => {
  it("writes Kubernetes' canonical text", () => {
    const cases: Array<[string | number, string]> = [
      ['0.5', '500m'],
      ['1', '1'],
      ['1.0', '1'],
      [2, '2'],
      [0.25, '250m'],
      ['1000m', '1'],
      ['1500m', '1500m'],
      ['1500', '1500'],
      ['2000', '2k'],
      ['1024Mi', '1Gi'],
      ['1000Mi', '1000Mi'],
      ['1.5Gi', '1536Mi'],
      ['512Ki', '512Ki'],
      ['1.5Ki', '1536'],
      ['0.1Ki', '102400m'],
      ['100Ki', '100Ki'],
      ['1e3', '1e3'],
      ['1500e-3', '1500e-3'],
      ['1E6', '1e6'],
      ['0', '0'],
      ['0Gi', '0'],
      ['-1.5', '-1500m'],
      ['1n', '1n'],
      ['0.0000000001', '1n'],
      ['1G', '1G'],
      ['1000k', '1M'],
    ];
    for (const [text, canonical] of cases) expect([text, Quantity.parse(text).toString()]).toEqual([text, canonical]);
  });

  it('adds and subtracts exactly, keeping the first non-zero format', () => {
    expect(Quantity.parse('100m').add(Quantity.parse('0.9')).toString()).toBe('1');
    expect(Quantity.zero().add(Quantity.parse('1Gi')).toString()).toBe('1Gi');
    expect(Quantity.parse('1Gi').add(Quantity.parse('1G')).toString()).toBe('2073741824');
    expect(Quantity.parse('1Gi').add(Quantity.parse('1Gi')).toString()).toBe('2Gi');
    expect(Quantity.parse('1').sub(Quantity.parse('1500m')).toString()).toBe('-500m');
    expect(Quantity.parse('1Gi').cmp(Quantity.parse('1073741824'))).toBe(0);
    expect(Quantity.parse('1k').cmp(Quantity.parse('999'))).toBe(1);
  });

  it('rounds values and milli-values up', () => {
    expect(Quantity.parse('100m').value()).toBe(1n);
    expect(Quantity.parse('1.5Gi').value()).toBe(1610612736n);
    expect(Quantity.parse('1u').milliValue()).toBe(1n);
    expect(Quantity.parse('1.1').roundUp().toString()).toBe('2');
  });

  it('refuses what is not a quantity', () => {
    for (const bad of ['', 'abc', '1Xi', '1.2.3', '--1', 'm']) expect(() => Quantity.parse(bad)).toThrow(QuantityError);
    expect(canonicalQuantity('abc')).toBe('abc');
  });
});
