/**
 * Name and key validation with Kubernetes' exact messages (k8s.io/apimachinery
 * `util/validation`, `api/validation`, `api/validation/path`). The `is*` functions return bare
 * messages; the `validate*` functions wrap each in a `FieldError` at the path the caller gives.
 * Lengths are UTF-8 byte lengths, as in Go.
 */
import type { FieldError } from '@svc/api';

const encoder = new TextEncoder();

export function utf8Length(s: string): number {
  return encoder.encode(s).length;
}

export function maxLenError(length: number): string {
  return `must be no more than ${length} characters`;
}

export function emptyError(): string {
  return 'must be non-empty';
}

/** `msg (e.g. 'a',  or 'b', regex used for validation is 'fmt')`, spaced exactly as Go's RegexError. */
export function regexError(msg: string, fmt: string, ...examples: string[]): string {
  if (examples.length === 0) return `${msg} (regex used for validation is '${fmt}')`;
  const shown = examples.map((e, i) => `${i > 0 ? ' or ' : ''}'${e}', `).join('');
  return `${msg} (e.g. ${shown}regex used for validation is '${fmt}')`;
}

function anchored(fmt: string): RegExp {
  return new RegExp(`^(?:${fmt})$`);
}

const DNS1123_LABEL_FMT = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const DNS1123_LABEL_MSG =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";
export const DNS1123_LABEL_MAX_LENGTH = 63;
const dns1123Label = anchored(DNS1123_LABEL_FMT);

const DNS1123_SUBDOMAIN_FMT = `${DNS1123_LABEL_FMT}(\\.${DNS1123_LABEL_FMT})*`;
const DNS1123_SUBDOMAIN_MSG =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
export const DNS1123_SUBDOMAIN_MAX_LENGTH = 253;
const dns1123Subdomain = anchored(DNS1123_SUBDOMAIN_FMT);

const DNS1035_LABEL_FMT = '[a-z]([-a-z0-9]*[a-z0-9])?';
const DNS1035_LABEL_MSG =
  "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character";
export const DNS1035_LABEL_MAX_LENGTH = 63;
const dns1035Label = anchored(DNS1035_LABEL_FMT);

const QNAME_FMT = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]';
const QNAME_MSG =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
export const QUALIFIED_NAME_MAX_LENGTH = 63;
const qualifiedName = anchored(QNAME_FMT);

const LABEL_VALUE_FMT = `(${QNAME_FMT})?`;
const LABEL_VALUE_MSG =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
export const LABEL_VALUE_MAX_LENGTH = 63;
const labelValue = anchored(LABEL_VALUE_FMT);

const CONFIG_MAP_KEY_FMT = '[-._a-zA-Z0-9]+';
const CONFIG_MAP_KEY_MSG = "a valid config key must consist of alphanumeric characters, '-', '_' or '.'";
const configMapKey = anchored(CONFIG_MAP_KEY_FMT);

/** Total bytes of annotation keys plus values (Kubernetes' TotalAnnotationSizeLimitB). */
export const TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024;

export function isDns1123Label(value: string): string[] {
  const errs: string[] = [];
  if (utf8Length(value) > DNS1123_LABEL_MAX_LENGTH) errs.push(maxLenError(DNS1123_LABEL_MAX_LENGTH));
  if (!dns1123Label.test(value)) {
    // A valid subdomain that is not a valid label (length already checked) has dots.
    if (dns1123Subdomain.test(value)) errs.push('must not contain dots');
    else errs.push(regexError(DNS1123_LABEL_MSG, DNS1123_LABEL_FMT, 'my-name', '123-abc'));
  }
  return errs;
}

export function isDns1123Subdomain(value: string): string[] {
  const errs: string[] = [];
  if (utf8Length(value) > DNS1123_SUBDOMAIN_MAX_LENGTH) errs.push(maxLenError(DNS1123_SUBDOMAIN_MAX_LENGTH));
  if (!dns1123Subdomain.test(value)) errs.push(regexError(DNS1123_SUBDOMAIN_MSG, DNS1123_SUBDOMAIN_FMT, 'example.com'));
  return errs;
}

export function isDns1035Label(value: string): string[] {
  const errs: string[] = [];
  if (utf8Length(value) > DNS1035_LABEL_MAX_LENGTH) errs.push(maxLenError(DNS1035_LABEL_MAX_LENGTH));
  if (!dns1035Label.test(value)) errs.push(regexError(DNS1035_LABEL_MSG, DNS1035_LABEL_FMT, 'my-name', 'abc-123'));
  return errs;
}

/** Label keys, annotation keys, finalizers: `[prefix/]name`, prefix a DNS subdomain. */
export function isQualifiedName(value: string): string[] {
  const errs: string[] = [];
  const parts = value.split('/');
  let name: string;
  if (parts.length === 1) {
    name = parts[0] ?? '';
  } else if (parts.length === 2) {
    const prefix = parts[0] ?? '';
    name = parts[1] ?? '';
    if (prefix.length === 0) errs.push(`prefix part ${emptyError()}`);
    else errs.push(...isDns1123Subdomain(prefix).map((m) => `prefix part ${m}`));
  } else {
    return [
      `a qualified name ${regexError(QNAME_MSG, QNAME_FMT, 'MyName', 'my.name', '123-abc')}` +
        " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
    ];
  }
  if (name.length === 0) errs.push(`name part ${emptyError()}`);
  else if (utf8Length(name) > QUALIFIED_NAME_MAX_LENGTH)
    errs.push(`name part ${maxLenError(QUALIFIED_NAME_MAX_LENGTH)}`);
  if (!qualifiedName.test(name))
    errs.push(`name part ${regexError(QNAME_MSG, QNAME_FMT, 'MyName', 'my.name', '123-abc')}`);
  return errs;
}

export function isValidLabelValue(value: string): string[] {
  const errs: string[] = [];
  if (utf8Length(value) > LABEL_VALUE_MAX_LENGTH) errs.push(maxLenError(LABEL_VALUE_MAX_LENGTH));
  if (!labelValue.test(value)) errs.push(regexError(LABEL_VALUE_MSG, LABEL_VALUE_FMT, 'MyValue', 'my_value', '12345'));
  return errs;
}

export function isConfigMapKey(value: string): string[] {
  const errs: string[] = [];
  if (utf8Length(value) > DNS1123_SUBDOMAIN_MAX_LENGTH) errs.push(maxLenError(DNS1123_SUBDOMAIN_MAX_LENGTH));
  if (!configMapKey.test(value))
    errs.push(regexError(CONFIG_MAP_KEY_MSG, CONFIG_MAP_KEY_FMT, 'key.name', 'KEY_NAME', 'key-name'));
  if (value === '.') errs.push("must not be '.'");
  else if (value === '..') errs.push("must not be '..'");
  else if (value.startsWith('..')) errs.push("must not start with '..'");
  return errs;
}

const PATH_SEGMENT_MAY_NOT_BE = ['.', '..'];
const PATH_SEGMENT_MAY_NOT_CONTAIN = ['/', '%'];

/** Names of resources whose names are only used as a URL path segment. */
export function isValidPathSegmentName(value: string): string[] {
  for (const bad of PATH_SEGMENT_MAY_NOT_BE) {
    if (value === bad) return [`may not be '${bad}'`];
  }
  return isValidPathSegmentPrefix(value);
}

export function isValidPathSegmentPrefix(value: string): string[] {
  return PATH_SEGMENT_MAY_NOT_CONTAIN.filter((c) => value.includes(c)).map((c) => `may not contain '${c}'`);
}

function invalidEach(path: string, value: string, msgs: string[]): FieldError[] {
  return msgs.map((detail) => ({ path, type: 'FieldValueInvalid', value, detail }));
}

export function validateDnsSubdomain(value: string, path: string): FieldError[] {
  return invalidEach(path, value, isDns1123Subdomain(value));
}

export function validateDnsLabel(value: string, path: string): FieldError[] {
  return invalidEach(path, value, isDns1123Label(value));
}

export function validateDns1035Label(value: string, path: string): FieldError[] {
  return invalidEach(path, value, isDns1035Label(value));
}

/** `prefix` validates a generateName prefix, which may end in anything a name may contain. */
export function validatePathSegmentName(value: string, path: string, prefix = false): FieldError[] {
  return invalidEach(path, value, prefix ? isValidPathSegmentPrefix(value) : isValidPathSegmentName(value));
}

export function validateQualifiedName(value: string, path: string): FieldError[] {
  return invalidEach(path, value, isQualifiedName(value));
}

export function validateLabelValue(value: string, path: string): FieldError[] {
  return invalidEach(path, value, isValidLabelValue(value));
}

export function validateConfigMapKey(value: string, path: string): FieldError[] {
  return invalidEach(path, value, isConfigMapKey(value));
}

/** Every error is reported at `path` itself (the map), carrying the bad key or value, as Kubernetes does. */
export function validateLabels(labels: Readonly<Record<string, string>>, path: string): FieldError[] {
  const errs: FieldError[] = [];
  for (const [k, v] of Object.entries(labels)) {
    errs.push(...validateQualifiedName(k, path));
    errs.push(...validateLabelValue(v, path));
  }
  return errs;
}

/** Keys are qualified names compared case-insensitively; keys plus values total at most 256 KiB. */
export function validateAnnotations(annotations: Readonly<Record<string, string>>, path: string): FieldError[] {
  const errs: FieldError[] = [];
  let size = 0;
  for (const [k, v] of Object.entries(annotations)) {
    errs.push(...invalidEach(path, k, isQualifiedName(k.toLowerCase())));
    size += utf8Length(k) + utf8Length(v);
  }
  if (size > TOTAL_ANNOTATION_SIZE_LIMIT) {
    errs.push({ path, type: 'FieldValueTooLong', detail: `may not be more than ${TOTAL_ANNOTATION_SIZE_LIMIT} bytes` });
  }
  return errs;
}

/**
 * Kubernetes' `ValidateNameFunc`: messages for `name`, or for a generateName prefix when
 * `prefix` is true.
 */
export type NameValidator = (name: string, prefix: boolean) => string[];

/**
 * A generateName prefix is validated as a name with a trailing '-' masked; we follow
 * Kubernetes' maskTrailingDash exactly, which replaces the last two characters with 'a'.
 */
export function maskTrailingDash(name: string): string {
  return name.length > 1 && name.endsWith('-') ? `${name.slice(0, -2)}a` : name;
}

export const nameIsDnsSubdomain: NameValidator = (name, prefix) =>
  isDns1123Subdomain(prefix ? maskTrailingDash(name) : name);
export const nameIsDnsLabel: NameValidator = (name, prefix) => isDns1123Label(prefix ? maskTrailingDash(name) : name);
export const nameIsDns1035Label: NameValidator = (name, prefix) =>
  isDns1035Label(prefix ? maskTrailingDash(name) : name);
export const nameIsPathSegment: NameValidator = (name, prefix) =>
  prefix ? isValidPathSegmentPrefix(name) : isValidPathSegmentName(name);

/** Errors for `metadata.generateName` (empty means not set: no errors). */
export function validateGenerateName(
  generateName: string,
  path: string,
  nameFn: NameValidator = nameIsDnsSubdomain,
): FieldError[] {
  if (generateName === '') return [];
  return invalidEach(path, generateName, nameFn(generateName, true));
}
