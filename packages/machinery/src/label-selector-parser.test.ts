import { isBadRequest, type StatusError } from '@svc/api';
import { parseLabelSelector } from './label-selector-parser.js';

function parseError(text: string): string {
  try {
    parseLabelSelector(text);
  } catch (e) {
    expect(isBadRequest(e)).toBe(true);
    return (e as StatusError).message;
  }
  throw new Error(`expected ${JSON.stringify(text)} to fail`);
}

const QNAME_NAME_MSG =
  "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const LABEL_VALUE_MSG =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

describe('parseLabelSelector: canonical form', () => {
  test.each<[string, string]>([
    ['', ''],
    ['   ', ''],
    ['a=b', 'a=b'],
    ['a==b', 'a==b'],
    ['a!=b', 'a!=b'],
    ['a', 'a'],
    ['!a', '!a'],
    ['! a', '!a'],
    ['a in (x,y)', 'a in (x,y)'],
    ['a in (y, x, y)', 'a in (x,y)'],
    ['a notin (x)', 'a notin (x)'],
    ['a in ()', 'a in ()'],
    ['a in (,)', 'a in ()'],
    ['a in (x,)', 'a in (,x)'],
    ['a in (x,,y)', 'a in (,x,y)'],
    ['a in (,y)', 'a in (,y)'],
    ['a=', 'a='],
    ['a=,b', 'a=,b'],
    ['  x = y , a in ( p , q ) ', 'a in (p,q),x=y'],
    ['z,y=1,!x,w notin (a)', 'w notin (a),!x,y=1,z'],
    ['in=notin', 'in=notin'],
    ['a in (in,notin)', 'a in (in,notin)'],
    ['a>1', 'a>1'],
    ['a < 10', 'a<10'],
    ['svc.io/app=web,app.kubernetes.io/name=x', 'app.kubernetes.io/name=x,svc.io/app=web'],
    ['a=b\tc=d'.replace('\t', ','), 'a=b,c=d'],
    ['a\n=\nb', 'a=b'],
  ])('%p → %p', (text, canonical) => {
    const sel = parseLabelSelector(text);
    expect(sel.toString()).toBe(canonical);
    expect(parseLabelSelector(sel.toString()).toString()).toBe(canonical);
  });

  test('requirements are exposed sorted by key', () => {
    expect(parseLabelSelector('b in (y,x),a').requirements()).toEqual([
      { key: 'a', operator: 'exists', values: [] },
      { key: 'b', operator: 'in', values: ['x', 'y'] },
    ]);
  });
});

describe('parseLabelSelector: errors are Kubernetes messages', () => {
  test.each<[string, string]>([
    ['a=b,', "found '', expected: identifier after ','"],
    [',a', "found ',', expected: !, identifier, or 'end of string'"],
    ['=a', "found '=', expected: !, identifier, or 'end of string'"],
    ['!=a', "found '!=', expected: !, identifier, or 'end of string'"],
    ['a=b c', "found 'c', expected: ',' or 'end of string'"],
    ['!a=b', "found '=', expected: ',' or 'end of string'"],
    ['a b', "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt"],
    ['a in x', "unable to parse requirement: found 'x' expected: '('"],
    ['a in (x y)', "unable to parse requirement: found 'y', expected: ',' or ')'"],
    ['a in (x', "unable to parse requirement: found '', expected: ',' or ')'"],
    ['a in (x,', "unable to parse requirement: found '', expected: ',', or identifier"],
    ['a in (,,)', "unable to parse requirement: found ')', expected: ',', or identifier"],
    ['a in (=)', "unable to parse requirement: found '=', expected: ',', ')' or identifier"],
    ['a=(b)', "unable to parse requirement: found '(', expected: identifier"],
    ['!', "unable to parse requirement: found '', expected: identifier"],
    ['!!a', "unable to parse requirement: found '!', expected: identifier"],
    [
      'a>x',
      "unable to parse requirement: values[0]: Invalid value: \"x\": for 'Gt', 'Lt' operators, the value must be an integer",
    ],
    ['app:web', `unable to parse requirement: <nil>: Invalid value: "app:web": ${QNAME_NAME_MSG}`],
    ['a=b@', `unable to parse requirement: values[0][a]: Invalid value: "b@": ${LABEL_VALUE_MSG}`],
  ])('%p', (text, message) => {
    expect(parseError(text)).toBe(message);
  });

  test('qualified-name errors are joined with "; "', () => {
    expect(parseError('/a')).toBe(
      'unable to parse requirement: <nil>: Invalid value: "/a": prefix part must be non-empty',
    );
    expect(parseError(`${'a'.repeat(64)}`)).toBe(
      `unable to parse requirement: <nil>: Invalid value: "${'a'.repeat(64)}": name part must be no more than 63 characters`,
    );
  });

  test('several bad values aggregate as [a, b]', () => {
    expect(parseError('a in (x@,y@)')).toBe(
      `unable to parse requirement: [values[0][a]: Invalid value: "x@": ${LABEL_VALUE_MSG}, ` +
        `values[1][a]: Invalid value: "y@": ${LABEL_VALUE_MSG}]`,
    );
  });
});
