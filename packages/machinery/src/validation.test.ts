import { fieldErrorMessage } from '@svc/api';
import {
  isConfigMapKey,
  isDns1035Label,
  isDns1123Label,
  isDns1123Subdomain,
  isQualifiedName,
  isValidLabelValue,
  isValidPathSegmentName,
  maskTrailingDash,
  nameIsDnsLabel,
  nameIsPathSegment,
  regexError,
  validateAnnotations,
  validateConfigMapKey,
  validateDns1035Label,
  validateDnsLabel,
  validateDnsSubdomain,
  validateGenerateName,
  validateLabels,
  validateLabelValue,
  validatePathSegmentName,
  validateQualifiedName,
} from './validation.js';

const SUBDOMAIN_MSG =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const LABEL_MSG =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const DNS1035_MSG =
  "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";
const QNAME_NAME_MSG =
  "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const QNAME_SLASHES_MSG =
  "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')";
const LABEL_VALUE_MSG =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
const CONFIG_KEY_MSG =
  "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')";

describe('regexError', () => {
  test('spacing matches Go', () => {
    expect(regexError('m', 'f')).toBe("m (regex used for validation is 'f')");
    expect(regexError('m', 'f', 'a')).toBe("m (e.g. 'a', regex used for validation is 'f')");
    expect(regexError('m', 'f', 'a', 'b')).toBe("m (e.g. 'a',  or 'b', regex used for validation is 'f')");
  });
});

describe('isDns1123Subdomain', () => {
  test.each([
    'a',
    'ab',
    'a-b',
    'a.b',
    'example.com',
    '0',
    '1.2.3',
    'a'.repeat(253),
    `${'a'.repeat(63)}.${'b'.repeat(63)}`,
  ])('%p is valid', (v) => expect(isDns1123Subdomain(v)).toEqual([]));
  test.each(['', 'A', '-a', 'a-', 'a..b', '.a', 'a.', 'a_b', 'a b', 'ä', 'a.-b'])('%p is invalid', (v) => {
    expect(isDns1123Subdomain(v)).toEqual([SUBDOMAIN_MSG]);
  });
  test('too long', () => {
    expect(isDns1123Subdomain('a'.repeat(254))).toEqual(['must be no more than 253 characters']);
    expect(isDns1123Subdomain('A'.repeat(254))).toEqual(['must be no more than 253 characters', SUBDOMAIN_MSG]);
  });
});

describe('isDns1123Label', () => {
  test.each(['a', 'a-b', '0a', '123', 'a'.repeat(63)])('%p is valid', (v) => expect(isDns1123Label(v)).toEqual([]));
  test.each(['', 'A', '-a', 'a-', 'a_b', 'a b'])('%p is invalid', (v) =>
    expect(isDns1123Label(v)).toEqual([LABEL_MSG]),
  );
  test('dots get their own message', () => {
    expect(isDns1123Label('a.b')).toEqual(['must not contain dots']);
  });
  test('too long', () => expect(isDns1123Label('a'.repeat(64))).toEqual(['must be no more than 63 characters']));
});

describe('isDns1035Label', () => {
  test.each(['a', 'a-1', 'abc-123', 'a'.repeat(63)])('%p is valid', (v) => expect(isDns1035Label(v)).toEqual([]));
  test.each(['', '1a', '-a', 'a-', 'A', 'a.b', 'a_b'])('%p is invalid', (v) =>
    expect(isDns1035Label(v)).toEqual([DNS1035_MSG]),
  );
  test('too long', () => expect(isDns1035Label('a'.repeat(64))).toEqual(['must be no more than 63 characters']));
});

describe('isQualifiedName', () => {
  test.each([
    'a',
    'A',
    'MyName',
    'my.name',
    '123-abc',
    'a_b',
    'example.com/MyName',
    'a/b',
    'svc.io/x-y_z.W',
    'a'.repeat(63),
    `${'a'.repeat(253)}/${'b'.repeat(63)}`,
  ])('%p is valid', (v) => expect(isQualifiedName(v)).toEqual([]));

  test.each<[string, string[]]>([
    ['', ['name part must be non-empty', QNAME_NAME_MSG]],
    ['-a', [QNAME_NAME_MSG]],
    ['a-', [QNAME_NAME_MSG]],
    ['a b', [QNAME_NAME_MSG]],
    ['a:b', [QNAME_NAME_MSG]],
    ['/a', ['prefix part must be non-empty']],
    ['a/', ['name part must be non-empty', QNAME_NAME_MSG]],
    ['Example.com/a', [`prefix part ${SUBDOMAIN_MSG}`]],
    ['a/b/c', [QNAME_SLASHES_MSG]],
    ['a'.repeat(64), ['name part must be no more than 63 characters']],
    [`${'a'.repeat(254)}/b`, ['prefix part must be no more than 253 characters']],
  ])('%p is invalid', (v, msgs) => expect(isQualifiedName(v)).toEqual(msgs));
});

describe('isValidLabelValue', () => {
  test.each(['', 'a', 'MyValue', 'my_value', '12345', 'a.b-c_d', 'a'.repeat(63)])('%p is valid', (v) => {
    expect(isValidLabelValue(v)).toEqual([]);
  });
  test.each(['-a', 'a-', '_', 'a b', 'a/b', 'a:b'])('%p is invalid', (v) =>
    expect(isValidLabelValue(v)).toEqual([LABEL_VALUE_MSG]),
  );
  test('too long', () => expect(isValidLabelValue('a'.repeat(64))).toEqual(['must be no more than 63 characters']));
});

describe('isConfigMapKey', () => {
  test.each(['a', 'key.name', 'KEY_NAME', 'key-name', '.a', '-', '_', 'a..b', 'a'.repeat(253)])('%p is valid', (v) =>
    expect(isConfigMapKey(v)).toEqual([]),
  );
  test.each<[string, string[]]>([
    ['', [CONFIG_KEY_MSG]],
    ['a/b', [CONFIG_KEY_MSG]],
    ['a b', [CONFIG_KEY_MSG]],
    ['.', ["must not be '.'"]],
    ['..', ["must not be '..'"]],
    ['..a', ["must not start with '..'"]],
    ['../a', [CONFIG_KEY_MSG, "must not start with '..'"]],
    ['a'.repeat(254), ['must be no more than 253 characters']],
  ])('%p is invalid', (v, msgs) => expect(isConfigMapKey(v)).toEqual(msgs));
});

describe('isValidPathSegmentName', () => {
  test.each(['a', 'A B', 'x:y', '...', '.a', 'ä'])('%p is valid', (v) => expect(isValidPathSegmentName(v)).toEqual([]));
  test.each<[string, string[]]>([
    ['.', ["may not be '.'"]],
    ['..', ["may not be '..'"]],
    ['a/b', ["may not contain '/'"]],
    ['a%b', ["may not contain '%'"]],
    ['/%', ["may not contain '/'", "may not contain '%'"]],
  ])('%p is invalid', (v, msgs) => expect(isValidPathSegmentName(v)).toEqual(msgs));
});

describe('validate* wrap messages in FieldErrors', () => {
  test('shape and rendering', () => {
    const errs = validateDnsSubdomain('Bad', 'metadata.name');
    expect(errs).toEqual([{ path: 'metadata.name', type: 'FieldValueInvalid', value: 'Bad', detail: SUBDOMAIN_MSG }]);
    expect(fieldErrorMessage(errs[0]!)).toBe(`metadata.name: Invalid value: "Bad": ${SUBDOMAIN_MSG}`);
  });
  test.each<[string, (v: string, p: string) => unknown[], string, number]>([
    ['validateDnsSubdomain', validateDnsSubdomain, 'a.b', 0],
    ['validateDnsLabel', validateDnsLabel, 'a.b', 1],
    ['validateDns1035Label', validateDns1035Label, '1a', 1],
    ['validateDns1035Label', validateDns1035Label, 'a1', 0],
    ['validatePathSegmentName', validatePathSegmentName, '..', 1],
    ['validateQualifiedName', validateQualifiedName, 'a/b/c', 1],
    ['validateLabelValue', validateLabelValue, '', 0],
    ['validateConfigMapKey', validateConfigMapKey, '..', 1],
    // eslint-disable-next-line max-params -- test.each spreads each table row into the callback's parameters
  ])('%s(%p)', (_name, fn, value, count) => expect(fn(value, 'p')).toHaveLength(count));

  test('path segment prefix allows "." and ".."', () => {
    expect(validatePathSegmentName('..', 'p', true)).toEqual([]);
    expect(validatePathSegmentName('a/', 'p', true)).toHaveLength(1);
  });
});

describe('validateLabels', () => {
  test('valid labels', () => {
    expect(validateLabels({ app: 'web', 'svc.io/tier': '', 'a.b/C_d': 'x.Y-z' }, 'metadata.labels')).toEqual([]);
  });
  test('errors are reported at the map path with the offending key or value', () => {
    expect(validateLabels({ 'a/b/c': 'ok', good: 'bad value' }, 'metadata.labels')).toEqual([
      { path: 'metadata.labels', type: 'FieldValueInvalid', value: 'a/b/c', detail: QNAME_SLASHES_MSG },
      { path: 'metadata.labels', type: 'FieldValueInvalid', value: 'bad value', detail: LABEL_VALUE_MSG },
    ]);
  });
});

describe('validateAnnotations', () => {
  test('keys are checked in lower case', () => {
    expect(validateAnnotations({ 'Example.COM/Key': 'anything at all: / % ä' }, 'metadata.annotations')).toEqual([]);
  });
  test('bad key reports the original key', () => {
    expect(validateAnnotations({ 'A B': 'v' }, 'metadata.annotations')).toEqual([
      { path: 'metadata.annotations', type: 'FieldValueInvalid', value: 'A B', detail: QNAME_NAME_MSG },
    ]);
  });
  test('total size limit is 256 KiB of keys plus values', () => {
    const at = { k: 'v'.repeat(262_143) };
    expect(validateAnnotations(at, 'metadata.annotations')).toEqual([]);
    const over = { k: 'v'.repeat(262_144) };
    const errs = validateAnnotations(over, 'metadata.annotations');
    expect(errs).toEqual([
      { path: 'metadata.annotations', type: 'FieldValueTooLong', detail: 'may not be more than 262144 bytes' },
    ]);
    expect(fieldErrorMessage(errs[0]!)).toBe('metadata.annotations: Too long: may not be more than 262144 bytes');
  });
  test('size counts UTF-8 bytes', () => {
    expect(validateAnnotations({ k: 'ä'.repeat(131_072) }, 'a')).toHaveLength(1);
  });
});

describe('generateName', () => {
  test.each<[string, string]>([
    ['abc-', 'aba'],
    ['a-', 'a'],
    ['-', '-'],
    ['abc', 'abc'],
    ['', ''],
  ])('maskTrailingDash(%p) = %p', (input, out) => expect(maskTrailingDash(input)).toBe(out));

  test.each(['web-', 'web', 'a-', 'my.app-', 'a.b-'])('%p is a valid prefix', (v) => {
    expect(validateGenerateName(v, 'metadata.generateName')).toEqual([]);
  });
  test.each(['Web-', '-', '-a-', 'a_b-'])('%p is an invalid prefix', (v) => {
    expect(validateGenerateName(v, 'metadata.generateName')).toEqual([
      { path: 'metadata.generateName', type: 'FieldValueInvalid', value: v, detail: SUBDOMAIN_MSG },
    ]);
  });
  test('the character before the trailing dash is masked too, as in Kubernetes', () => {
    expect(validateGenerateName('a.-', 'p')).toEqual([]);
  });
  test('empty means unset', () => expect(validateGenerateName('', 'p')).toEqual([]));
  test('other name rules', () => {
    expect(validateGenerateName('a.b-', 'p', nameIsDnsLabel)).toEqual([
      { path: 'p', type: 'FieldValueInvalid', value: 'a.b-', detail: 'must not contain dots' },
    ]);
    expect(validateGenerateName('..', 'p', nameIsPathSegment)).toEqual([]);
    expect(nameIsPathSegment('..', false)).toEqual(["may not be '..'"]);
  });
});
