import { QuantityError, quantityMilliValue, quantityValue } from './quantity.js';

describe('quantities', () => {
  it('reads decimal, binary and exponent forms exactly', () => {
    expect(quantityMilliValue('100m')).toBe(100);
    expect(quantityMilliValue('0.1')).toBe(100);
    expect(quantityMilliValue('1.5')).toBe(1500);
    expect(quantityMilliValue('2')).toBe(2000);
    expect(quantityValue('128Mi')).toBe(128 * 2 ** 20);
    expect(quantityValue('1.5Gi')).toBe(1610612736);
    expect(quantityValue('2k')).toBe(2000);
    expect(quantityValue('1e3')).toBe(1000);
    expect(quantityValue('110')).toBe(110);
    expect(quantityValue('.5')).toBe(1);
  });

  it("rounds up as Kubernetes' Value and MilliValue do", () => {
    expect(quantityValue('100m')).toBe(1);
    expect(quantityMilliValue('1u')).toBe(1);
    expect(quantityValue('-1.5')).toBe(-2);
  });

  it('refuses what is not a quantity', () => {
    for (const bad of ['', 'abc', '1Xi', '1.2.3', '--1', 'm']) expect(() => quantityValue(bad)).toThrow(QuantityError);
  });
});
