import { compilation } from './cel-compile.js';
import { extKey, type JSONSchemaProps } from './types.js';

describe('compilation', () => {
  const node: JSONSchemaProps = {
    type: 'object',
    properties: { a: { type: 'string' } },
    [extKey('validations')]: [
      { rule: 'self.a == oldSelf.a', messageExpression: '"a is " + self.a', fieldPath: '.a' },
      { rule: 'has(self.a)' },
    ],
  };
  const root: JSONSchemaProps = { type: 'object', properties: { spec: node } };

  it('compiles once per node and notes oldSelf, messageExpression and fieldPath', () => {
    const c = compilation(root);
    const compiled = c.node(node, false);
    expect(c.node(node, false)).toBe(compiled);
    expect(compilation(root)).toBe(c);
    const [first, second] = compiled.rules;
    expect(first).toMatchObject({ usesOldSelf: true, fieldPath: 'a' });
    expect(first?.message?.({ self: { a: 'x' } })).toBe('a is x');
    expect(second).toMatchObject({ usesOldSelf: false });
    expect(second?.program?.({ self: {} })).toBe(false);
  });
});
