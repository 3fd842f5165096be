import { celBaseEnvironment, CelURL, celEqual, rewriteHas } from './cel-library.js';

describe('rewriteHas', () => {
  it('renames has( outside strings and receiver calls, keeping every offset', () => {
    const src = `has(self.a) && self.m.has(x) && "has(" == 'has(' && r"has(" != '''has(''' && has (self.b[0].c)`;
    const out = rewriteHas(src);
    expect(out).toBe(`_hs(self.a) && self.m.has(x) && "has(" == 'has(' && r"has(" != '''has(''' && _hs (self.b[0].c)`);
    expect(out).toHaveLength(src.length);
    expect(rewriteHas('hasx(a) || self.has_y')).toBe('hasx(a) || self.has_y');
  });
});

describe('the Kubernetes library on cel-js', () => {
  const env = celBaseEnvironment().clone();
  env.registerVariable('self', 'dyn');
  const run = (expr: string, self: unknown = null) => env.evaluate(rewriteHas(expr), { self }) as unknown;

  it.each<[string, unknown]>([
    ['"héllo".charAt(1)', 'é'],
    ['"abc".charAt(3)', ''],
    ['"a-b-c".replace("-", "+")', 'a+b+c'],
    ['"a-b-c".replace("-", "+", 1)', 'a+b-c'],
    ['"AbC".lowerAscii() + "x".upperAscii()', 'abcX'],
    ['"a/b".split("/")[1]', 'b'],
    ['strings.quote("a\\nb\\"")', '"a\\nb\\""'],
    ['[1, 2, 2].isSorted() && ![2, 1].isSorted()', true],
    ['[1, 2, 3].sum()', 6n],
    ['[0.5, 0.25].sum()', 0.75],
    ['[].sum()', 0n],
    ['[3, 1, 2].min() == 1 && [3, 1, 2].max() == 3', true],
    ['["b", "a"].min()', 'a'],
    ['[1, 2, 1].indexOf(1) == 0 && [1, 2, 1].lastIndexOf(1) == 2 && [1].indexOf(5) == -1', true],
    ['"abc 123 de 45".find("[0-9]+")', '123'],
    ['"abc 123 de 45".findAll("[0-9]+")', ['123', '45']],
    ['"abc 123 de 45".findAll("[0-9]+", 1)', ['123']],
    ['isURL("https://example.com/x") && !isURL("not a url")', true],
    ['url("https://user@example.com:8443/p?q=1&q=2").getHost()', 'example.com:8443'],
    ['url("https://[::1]:80/p").getHostname()', '::1'],
    ['url("https://example.com:8443/p").getPort()', '8443'],
    ['url("https://example.com/a%20b").getEscapedPath()', '/a%20b'],
    ['url("https://example.com/p?q=1&q=2").getQuery()["q"]', ['1', '2']],
    ['url("/relative/path").getScheme()', ''],
    ['sets.contains([1, 2, 3], [1, 3]) && !sets.contains([1], [2])', true],
    ['sets.equivalent([1, 2, 1], [2, 1]) && sets.intersects([1, 2], [2, 3])', true],
    ['has(self.a) && !has(self.b)', true],
    ['has(self.list[0].x)', true],
  ])('%s', (expr, expected) => {
    expect(run(expr, { a: 1, list: [{ x: 1 }] })).toEqual(expected);
  });

  it('fails min() on an empty list and url() on a bad URL', () => {
    expect(() => run('[].min()')).toThrow(/empty list/);
    expect(() => run('url("nope")')).toThrow(/URL parse error/);
  });
});

describe('celEqual and CelURL', () => {
  it('compares numbers across int and double, and values deeply', () => {
    expect(celEqual(1n, 1)).toBe(true);
    expect(celEqual({ a: [1n] }, { a: [1n] })).toBe(true);
    expect(celEqual({ a: 1n }, { a: 2n })).toBe(false);
  });

  it('parses as Go url.ParseRequestURI', () => {
    expect(CelURL.parse('mailto:a@b')).toMatchObject({ scheme: 'mailto', host: '', path: 'a@b' });
    expect(CelURL.parse('x y')).toBeUndefined();
  });
});
