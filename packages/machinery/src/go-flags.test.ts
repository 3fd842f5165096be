import { parseGoBool } from './go-flags.js';

describe('parseGoBool', () => {
  test.each(['1', 't', 'T', 'TRUE', 'true', 'True'])('%p is true', (s) => expect(parseGoBool(s)).toBe(true));
  test.each(['0', 'f', 'F', 'FALSE', 'false', 'False'])('%p is false', (s) => expect(parseGoBool(s)).toBe(false));
  test.each(['', 'yes', 'tRUE', ' true', 'on', '2'])('%p is rejected', (s) => {
    expect(() => parseGoBool(s)).toThrow(`strconv.ParseBool: parsing ${JSON.stringify(s)}: invalid syntax`);
  });
});
