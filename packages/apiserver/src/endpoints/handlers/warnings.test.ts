import { validateHeaderValue } from 'node:http';
import { WARNING_CHARS, WARNINGS_TOTAL_CHARS, warningHeaderValues } from './warnings.js';

/** The text of a header value (quoted as JSON). */
const textOf = (v: string): string => JSON.parse(v.replace(/^299 - /, '')) as string;

describe('warningHeaderValues', () => {
  it('writes any text as a valid header value in ASCII', () => {
    const texts = ['unknown field "metadata.💥"', 'ñ ☃ \u00ff', 'del\u007f', 'ctl\u0001\n', 'lone \ud800'];
    const values = warningHeaderValues(texts);
    for (const v of values) {
      expect(() => validateHeaderValue('Warning', v)).not.toThrow();
      expect(v).toMatch(/^[\x20-\x7e]+$/);
    }
    expect(values.map(textOf)).toEqual([
      'unknown field "metadata.💥"',
      'ñ ☃ \u00ff',
      'del\u007f',
      'ctl\u0001\n',
      'lone \ud800',
    ]);
    expect(values[0]).toBe('299 - "unknown field \\"metadata.\\ud83d\\udca5\\""');
  });

  it('says each warning once', () => {
    expect(warningHeaderValues(['a', 'b', 'a'])).toEqual(['299 - "a"', '299 - "b"']);
  });

  it('keeps thousands of warnings within the total: each cut short, the rest left out', () => {
    const many = Array.from({ length: 2000 }, (_, i) => `duplicate field "x${i}" ${'y'.repeat(300)}`);
    const values = warningHeaderValues(many);
    const texts = values.map(textOf);
    expect(texts.length).toBeGreaterThan(0);
    expect(texts.length).toBeLessThan(many.length);
    expect(texts.every((t) => t.length === WARNING_CHARS)).toBe(true);
    expect(texts.reduce((n, t) => n + t.length, 0)).toBeLessThanOrEqual(WARNINGS_TOTAL_CHARS);
    expect(texts[0]).toBe(many[0]?.slice(0, WARNING_CHARS));
  });

  it('leaves warnings within the total as they are', () => {
    const long = 'z'.repeat(1000);
    expect(warningHeaderValues([long, 'short']).map(textOf)).toEqual([long, 'short']);
  });
});
