/**
 * A small schema DSL. Each built-in type writes its schema once with these builders; field
 * validation, merge metadata (strategic merge / apply), OpenAPI and Protobuf numbering are
 * all derived from it. Property order is the wire order. The builders keep the shape they
 * were given in their types (property names, item and value schemas, enum values), so the
 * wire types of `wire/` can be checked against a schema at compile time.
 */
export type ListType = 'atomic' | 'set' | 'map';
export type MapType = 'atomic' | 'granular';

interface Common {
  description?: string;
  /** Protobuf field number inside the parent message (Kubernetes' generated.proto). */
  tag?: number;
  /**
   * Protobuf: the field lives in the embedded message at this field number of the parent
   * (Go structs JSON inlines, e.g. Probe's ProbeHandler at 1); `tag` is its number in there.
   * A list is a path of embedded messages (outermost first) for inlines inside inlines.
   */
  embeddedIn?: number | readonly number[];
  /** Defaulted value applied when the field is absent. */
  default?: unknown;
}

export interface StringSchema<E extends readonly string[] = readonly string[]> extends Common {
  type: 'string';
  format?: 'date-time' | 'byte' | 'uuid';
  enum?: E;
  /** A `metav1.MicroTime` (date-time in microseconds): Protobuf answers always carry six digits of fraction. */
  micro?: boolean;
}
export interface IntegerSchema extends Common {
  type: 'integer';
  format?: 'int32' | 'int64';
  minimum?: number;
}
export interface NumberSchema extends Common {
  type: 'number';
}
export interface BooleanSchema extends Common {
  type: 'boolean';
}
/** `intstr.IntOrString` and `resource.Quantity`: a string or an integer on the wire. */
export interface IntOrStringSchema extends Common {
  type: 'int-or-string';
  format?: 'quantity';
}
/**
 * Free-form JSON: anything goes, nothing is pruned. `json-bytes` marks Kubernetes'
 * FieldsV1 / RawExtension: in Protobuf a message whose field 1 holds the JSON bytes.
 */
export interface AnySchema extends Common {
  type: 'any';
  format?: 'json-bytes';
}

export interface ObjectSchema<
  P extends Readonly<Record<string, Schema>> = Readonly<Record<string, Schema>>,
> extends Common {
  type: 'object';
  properties: P;
  required?: readonly string[];
  /** `x-svc-map-type` for structs. */
  structType?: MapType;
  /** Keep fields that are not in `properties` (custom resources opt in). */
  preserveUnknownFields?: boolean;
}

export interface MapSchema<V extends Schema = Schema> extends Common {
  type: 'map';
  values: V;
  mapType?: MapType;
}

export interface ArraySchema<I extends Schema = Schema> extends Common {
  type: 'array';
  items: I;
  listType?: ListType;
  listMapKeys?: readonly string[];
  /** Strategic-merge-patch markers (read as listType=map / listMapKeys when listType is missing). */
  patchStrategy?: 'merge' | 'replace' | 'retainKeys' | 'merge,retainKeys';
  patchMergeKey?: string;
}

export type Schema =
  | StringSchema
  | IntegerSchema
  | NumberSchema
  | BooleanSchema
  | IntOrStringSchema
  | AnySchema
  | ObjectSchema
  | MapSchema
  | ArraySchema;

type Opts<S> = Omit<S, 'type' | 'items' | 'values' | 'properties'>;
type StringOpts = Omit<StringSchema, 'type' | 'enum'>;

export const s = {
  /** A string; `enum` keeps its values in the type (`'Always' | 'Never'`). */
  str: <const E extends readonly string[] = readonly string[]>(o: StringOpts & { enum?: E } = {}): StringSchema<E> => ({
    type: 'string',
    ...o,
  }),
  time: (o: Opts<StringSchema> = {}): StringSchema => ({ type: 'string', format: 'date-time', ...o }),
  microTime: (o: Opts<StringSchema> = {}): StringSchema => ({ type: 'string', format: 'date-time', micro: true, ...o }),
  bytes: (o: Opts<StringSchema> = {}): StringSchema => ({ type: 'string', format: 'byte', ...o }),
  int: (o: Opts<IntegerSchema> = {}): IntegerSchema => ({ type: 'integer', ...o }),
  int32: (o: Opts<IntegerSchema> = {}): IntegerSchema => ({ type: 'integer', format: 'int32', ...o }),
  int64: (o: Opts<IntegerSchema> = {}): IntegerSchema => ({ type: 'integer', format: 'int64', ...o }),
  num: (o: Opts<NumberSchema> = {}): NumberSchema => ({ type: 'number', ...o }),
  bool: (o: Opts<BooleanSchema> = {}): BooleanSchema => ({ type: 'boolean', ...o }),
  intOrString: (o: Opts<IntOrStringSchema> = {}): IntOrStringSchema => ({ type: 'int-or-string', ...o }),
  quantity: (o: Opts<IntOrStringSchema> = {}): IntOrStringSchema => ({
    type: 'int-or-string',
    format: 'quantity',
    ...o,
  }),
  any: (o: Opts<AnySchema> = {}): AnySchema => ({ type: 'any', ...o }),
  obj: <P extends Record<string, Schema>>(properties: P, o: Opts<ObjectSchema> = {}): ObjectSchema<P> => ({
    type: 'object',
    properties,
    ...o,
  }),
  map: <V extends Schema>(values: V, o: Opts<MapSchema> = {}): MapSchema<V> => ({ type: 'map', values, ...o }),
  arr: <I extends Schema>(items: I, o: Opts<ArraySchema> = {}): ArraySchema<I> => ({ type: 'array', items, ...o }),
  /** A list of scalars with set semantics. */
  set: <I extends Schema>(items: I, o: Opts<ArraySchema> = {}): ArraySchema<I> => ({
    type: 'array',
    items,
    listType: 'set',
    ...o,
  }),
  /** A list of objects keyed by `keys` (strategic merge by the first key). */
  keyed: <I extends Schema>(items: I, keys: readonly string[], o: Opts<ArraySchema> = {}): ArraySchema<I> => ({
    type: 'array',
    items,
    listType: 'map',
    listMapKeys: keys,
    patchStrategy: 'merge',
    patchMergeKey: keys[0],
    ...o,
  }),
  /** A list replaced as a whole. */
  atomic: <I extends Schema>(items: I, o: Opts<ArraySchema> = {}): ArraySchema<I> => ({
    type: 'array',
    items,
    listType: 'atomic',
    ...o,
  }),
};

/** Assigns Protobuf tags 1..n in property order where a property has none. */
export function numbered(props: Record<string, Schema>): Record<string, Schema> {
  let n = 0;
  const out: Record<string, Schema> = {};
  for (const [k, v] of Object.entries(props)) {
    n = v.tag ?? n + 1;
    out[k] = { ...v, tag: n };
  }
  return out;
}

export function childSchema(parent: Schema | undefined, key: string): Schema | undefined {
  if (!parent) return undefined;
  switch (parent.type) {
    case 'object':
      return parent.properties[key] ?? (parent.preserveUnknownFields ? { type: 'any' } : undefined);
    case 'map':
      return parent.values;
    case 'any':
      return parent;
    default:
      return undefined;
  }
}
