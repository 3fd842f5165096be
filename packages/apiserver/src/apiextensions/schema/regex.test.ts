import { compilePattern } from './regex.js';

const test = (p: string, s: string) => {
  const re = compilePattern(p);
  if (re instanceof Error) throw re;
  return re.test(s);
};

describe('compilePattern (RE2 patterns as ECMAScript)', () => {
  it('runs common patterns', () => {
    expect(test('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$', 'my-name')).toBe(true);
    expect(test('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$', '-x')).toBe(false);
    expect(test("^(?:[-A-Za-z0-9/._~!$&'()*+,;=:@]|[%][0-9a-fA-F]{2})+$", '/a%2F')).toBe(true);
  });

  it('translates RE2 spellings', () => {
    expect(test('(?i)^abc$', 'ABC')).toBe(true);
    expect(test('^(?P<x>a)b$', 'ab')).toBe(true);
    expect(test('\\Aab\\z', 'ab')).toBe(true);
    expect(test('^[[:alpha:]]+$', 'abC')).toBe(true);
    expect(test('^[[:digit:]]+$', 'a')).toBe(false);
  });

  it('returns the error of a pattern that does not compile', () => {
    expect(compilePattern('(')).toBeInstanceOf(Error);
  });
});
