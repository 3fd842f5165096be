import { duplicateJsonFields } from './duplicate-fields.js';

describe('duplicateJsonFields', () => {
  it.each([
    ['{"a":1,"b":2}', []],
    ['{"a":1,"a":2}', ['a']],
    ['{"metadata":{"name":"x","name":"y"},"spec":{"c":[{"n":1},{"n":2,"n":3}]}}', ['metadata.name', 'spec.c[1].n']],
    ['{"s":"a\\"b","s":"}{","t":[]}', ['s']],
    ['[{"a":1},{"a":1,"a":2}]', ['[1].a']],
    ['{ "a" : { } , "b" : [ ] , "a" : null }', ['a']],
  ])('%s → %j', (text, dups) => {
    JSON.parse(text);
    expect(duplicateJsonFields(text)).toEqual(dups);
  });
});
