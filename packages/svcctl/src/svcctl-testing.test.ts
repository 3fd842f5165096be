import { sameButTick } from './svcctl-testing.js';

describe('sameButTick', () => {
  it('accepts ages one second apart, padding included', () => {
    expect(sameButTick('NAME   AGE\na      4s\n', 'NAME   AGE\na      5s\n')).toBe(true);
    expect(sameButTick('a   9s    x\n', 'a   10s   x\n')).toBe(true);
    expect(sameButTick('a 2m59s\n', 'a 3m0s\n')).toBe(true);
  });

  it('refuses other differences and ages further apart', () => {
    expect(sameButTick('a 4s\n', 'a 6s\n')).toBe(false);
    expect(sameButTick('a 4s 1\n', 'a 4s 2\n')).toBe(false);
    expect(sameButTick('a 4s\n', 'a 4s\nb 4s\n')).toBe(false);
  });
});
