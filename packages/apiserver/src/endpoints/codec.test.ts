import { isStatusError } from '@svc/api';
import { MAX_NESTING_DEPTH } from '@svc/machinery';
import { bodyCodec, decodeBody } from './codec.js';
import { deepText, yamlAliasBomb } from './fuzz-requests-testing.js';

/** The Status code and message `decodeBody` refuses a body with (fails when it accepts it). */
function refusal(text: string, codec: 'json' | 'yaml'): { code: number; message: string } {
  try {
    decodeBody(Buffer.from(text), codec);
  } catch (e) {
    if (!isStatusError(e)) throw e;
    return { code: e.status.code, message: e.status.message ?? '' };
  }
  throw new Error(`${codec} body was accepted: ${text.slice(0, 80)}`);
}

const inAnnotations = (nested: string): string =>
  `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","annotations":${nested}}}`;

describe('decodeBody under hostile input', () => {
  it.each([
    ['JSON', 'json'],
    ['YAML (flow style)', 'yaml'],
  ] as const)('%s nested 10,000 deep is a 400, not a stack overflow', (_what, codec) => {
    for (const text of [
      deepText(10_000, 'array'),
      deepText(10_000, 'object'),
      inAnnotations(deepText(50_000, 'object')),
    ]) {
      const r = refusal(text, codec);
      expect(r.code).toBe(400);
      expect(r.message).toMatch(new RegExp(`exceeded max depth of ${MAX_NESTING_DEPTH}$`));
    }
  });

  it('YAML nested deeply in block style is a 400', () => {
    let text = 'a:\n';
    for (let i = 1; i <= 2000; i++) text += `${' '.repeat(i)}a:\n`;
    expect(refusal(`${text}${' '.repeat(2001)}b: 1\n`, 'yaml')).toEqual({
      code: 400,
      message: `error converting YAML to JSON: yaml: exceeded max depth of ${MAX_NESTING_DEPTH}`,
    });
    expect(refusal(`${'- '.repeat(5000)}x\n`, 'yaml').code).toBe(400);
  });

  it('nesting up to the limit decodes', () => {
    const nested = deepText(MAX_NESTING_DEPTH - 3, 'array');
    for (const codec of ['json', 'yaml'] as const) {
      const { value } = decodeBody(Buffer.from(inAnnotations(nested)), codec);
      expect(value).toMatchObject({ kind: 'ConfigMap', metadata: { name: 'x' } });
    }
  });

  it('a YAML alias bomb (billion laughs) is a 400', () => {
    const r = refusal(yamlAliasBomb({ levels: 9, fan: 9 }), 'yaml');
    expect(r.code).toBe(400);
    expect(r.message).toMatch(/^error converting YAML to JSON: yaml: Excessive alias count/);
  });

  it('aliases that nest an anchor again past the limit are a 400', () => {
    // Each anchor holds the one before 100 levels down: 4 aliases make it 400 deep.
    const lines = ['a0: &a0 [x]'];
    for (let i = 1; i <= 4; i++) lines.push(`a${i}: &a${i} ${'['.repeat(100)}*a${i - 1}${']'.repeat(100)}`);
    expect(refusal(lines.join('\n'), 'yaml')).toEqual({
      code: 400,
      message: `error converting YAML to JSON: yaml: exceeded max depth of ${MAX_NESTING_DEPTH}`,
    });
  });

  it('a wide anchor used many times is a 400 (excessive aliasing), a few shared anchors decode', () => {
    const wide = `a: &a [${Array(40_000).fill('x').join(',')}]\nb: [${Array(74).fill('*a').join(',')}]\n`;
    expect(refusal(wide, 'yaml')).toEqual({
      code: 400,
      message: 'error converting YAML to JSON: yaml: document contains excessive aliasing',
    });
    const shared = [
      'apiVersion: v1',
      'kind: ConfigMap',
      'metadata: {name: x, labels: &l {app: web, tier: front}}',
      'extra:',
      `  env: &env [${Array(200).fill('{name: A, value: b}').join(',')}]`,
      '  one: *env',
      '  two: *env',
      '  labels: [*l, *l, *l]',
    ].join('\n');
    const { value } = decodeBody(Buffer.from(shared), 'yaml');
    expect((value as { extra: { two: unknown[] } }).extra.two).toHaveLength(200);
  });

  it.each(['a: &a [*a]\n', 'a: &a {b: {c: *a}}\n', '&top [1, *top]\n'])(
    'an alias inside its own anchor (%j) is a 400, not a circular value',
    (text) => {
      expect(refusal(text, 'yaml')).toEqual({
        code: 400,
        message: 'error converting YAML to JSON: yaml: an alias refers to its own anchor',
      });
    },
  );

  it('a mapping or sequence as a key is a 400, and nothing is logged', () => {
    const warn = jest.spyOn(process, 'emitWarning');
    try {
      for (const text of ['? [a, b]\n: c\n', 'x: &k {a: 1}\ny: {*k : 2}\n', '{[a]: 1}\n']) {
        expect(refusal(text, 'yaml')).toEqual({
          code: 400,
          message: 'error converting YAML to JSON: yaml: invalid map key: a mapping or sequence',
        });
      }
      expect(warn).not.toHaveBeenCalled();
    } finally {
      warn.mockRestore();
    }
  });

  it('explicit YAML 1.1 tags read as what they are written as; values JSON cannot hold are a 400', () => {
    const { value } = decodeBody(
      Buffer.from('a: !!binary aGVsbG8=\nb: !!set {x, y}\nc: !!timestamp 2001-12-14\nd: &s 1\ne: *s\n'),
      'yaml',
    );
    expect(value).toEqual({ a: 'aGVsbG8=', b: { x: null, y: null }, c: '2001-12-14', d: 1, e: 1 });
    for (const [text, what] of [
      ['a: .inf\n', 'Infinity'],
      ['a: [1, -.inf]\n', '-Infinity'],
      ['a: {b: .nan}\n', 'NaN'],
      ['%YAML 1.1\n---\nc: 2001-12-14\n', 'Date'],
      ['%YAML 1.1\n---\nc: !!binary aGVsbG8=\n', 'Buffer'],
      ['%YAML 1.1\n---\nc: !!set {x}\n', 'Set'],
    ] as const) {
      expect(refusal(text, 'yaml')).toEqual({
        code: 400,
        message: `error converting YAML to JSON: yaml: unsupported value: ${what}`,
      });
    }
  });
});

describe('bodyCodec', () => {
  it('reads a missing Content-Type as JSON, a malformed one as unsupported (415)', () => {
    expect(bodyCodec(undefined)).toEqual({ codec: 'json', mediaType: 'application/json' });
    expect(bodyCodec('application/yaml; charset=utf-8')).toEqual({ codec: 'yaml', mediaType: 'application/yaml' });
    for (const ct of ['json', ' ', 'application/', 'application/json, application/yaml', '/']) {
      let code: number | undefined;
      try {
        bodyCodec(ct);
      } catch (e) {
        code = isStatusError(e) ? e.status.code : undefined;
      }
      expect([ct, code]).toEqual([ct, 415]);
    }
  });
});
