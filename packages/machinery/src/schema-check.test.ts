import { fieldErrorMessage, s, type Schema } from '@svc/api';
import {
  checkSchema,
  isBase64,
  isRfc3339DateTime,
  jsonTypeOf,
  nullListItemsAsEmptyObjects,
  pruneUnknownFields,
} from './schema-check.js';
import { cloneJson } from './merge-patch.js';

const container = s.obj(
  {
    name: s.str(),
    image: s.str(),
    imagePullPolicy: s.str({ enum: ['Always', 'IfNotPresent', 'Never'] }),
    ports: s.keyed(s.obj({ containerPort: s.int32(), protocol: s.str() }, { required: ['containerPort'] }), [
      'containerPort',
    ]),
    env: s.arr(s.obj({ name: s.str(), value: s.str() }, { required: ['name'] })),
  },
  { required: ['name'] },
);

const podLike = s.obj({
  apiVersion: s.str(),
  kind: s.str(),
  metadata: s.obj({
    name: s.str(),
    labels: s.map(s.str()),
    creationTimestamp: s.time(),
    generation: s.int64(),
  }),
  spec: s.obj(
    {
      containers: s.keyed(container, ['name']),
      replicas: s.int32(),
      ratio: s.num(),
      paused: s.bool(),
      maxSurge: s.intOrString(),
      config: s.any(),
      extra: s.obj({ known: s.str() }, { preserveUnknownFields: true }),
      blob: s.bytes(),
    },
    { required: ['containers'] },
  ),
});

function messages(value: unknown, schema: Schema = podLike): string[] {
  return checkSchema(value, schema).errors.map(fieldErrorMessage);
}

describe('checkSchema', () => {
  const good = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: 'p',
      labels: { 'app.svc.io/name': 'x' },
      creationTimestamp: '2024-02-29T12:00:00Z',
      generation: 3,
    },
    spec: {
      containers: [
        {
          name: 'c',
          image: 'img',
          imagePullPolicy: 'Always',
          ports: [{ containerPort: 80 }],
          env: [{ name: 'A', value: 'b' }],
        },
      ],
      replicas: 3,
      ratio: 0.5,
      paused: false,
      maxSurge: '25%',
      config: { anything: [1, 'two'] },
      extra: { known: 'k', other: 1 },
      blob: 'aGVsbG8=',
    },
  };

  test('a valid object has no errors and no unknown fields', () => {
    expect(checkSchema(good, podLike)).toEqual({ errors: [], unknownFields: [], value: good });
  });

  test('int-or-string takes an integer too', () => {
    const v = cloneJson(good);
    v.spec.maxSurge = 1 as unknown as string;
    expect(messages(v)).toEqual([]);
  });

  test.each<[string, (v: typeof good) => void, string[]]>([
    [
      'string expected',
      (v) => {
        (v.metadata as Record<string, unknown>).name = 5;
      },
      ['metadata.name: Invalid value: "integer": must be of type string'],
    ],
    [
      'integer expected',
      (v) => {
        (v.spec as Record<string, unknown>).replicas = '3';
      },
      ['spec.replicas: Invalid value: "string": must be of type integer'],
    ],
    [
      'fraction is not an integer',
      (v) => {
        v.spec.replicas = 1.5;
      },
      ['spec.replicas: Invalid value: "number": must be of type integer'],
    ],
    [
      'int32 range',
      (v) => {
        v.spec.replicas = 2 ** 31;
      },
      ['spec.replicas: Invalid value: 2147483648: must be of type int32'],
    ],
    [
      'int32 lower bound ok',
      (v) => {
        v.spec.replicas = -(2 ** 31);
      },
      [],
    ],
    [
      'int64 range',
      (v) => {
        v.metadata.generation = 2 ** 64;
      },
      ['metadata.generation: Invalid value: 18446744073709552000: must be of type int64'],
    ],
    [
      'number expected',
      (v) => {
        (v.spec as Record<string, unknown>).ratio = true;
      },
      ['spec.ratio: Invalid value: "boolean": must be of type number'],
    ],
    [
      'boolean expected',
      (v) => {
        (v.spec as Record<string, unknown>).paused = 'false';
      },
      ['spec.paused: Invalid value: "string": must be of type boolean'],
    ],
    [
      'int-or-string rejects fractions',
      (v) => {
        (v.spec as Record<string, unknown>).maxSurge = 0.5;
      },
      ['spec.maxSurge: Invalid value: "number": must be of type int-or-string'],
    ],
    [
      'object expected',
      (v) => {
        (v as Record<string, unknown>).spec = [];
      },
      ['spec: Invalid value: "array": must be of type object'],
    ],
    [
      'map expected',
      (v) => {
        (v.metadata as Record<string, unknown>).labels = 'a=b';
      },
      ['metadata.labels: Invalid value: "string": must be of type object'],
    ],
    [
      'map value type',
      (v) => {
        (v.metadata.labels as Record<string, unknown>)['app.svc.io/name'] = 1;
      },
      ['metadata.labels.app.svc.io/name: Invalid value: "integer": must be of type string'],
    ],
    [
      'array expected',
      (v) => {
        (v.spec as Record<string, unknown>).containers = { name: 'c' };
      },
      ['spec.containers: Invalid value: "object": must be of type array'],
    ],
    [
      'nested array item',
      (v) => {
        (v.spec.containers[0]!.ports[0] as Record<string, unknown>).containerPort = '80';
      },
      ['spec.containers[0].ports[0].containerPort: Invalid value: "string": must be of type integer'],
    ],
    [
      'enum',
      (v) => {
        v.spec.containers[0]!.imagePullPolicy = 'Sometimes';
      },
      [
        'spec.containers[0].imagePullPolicy: Unsupported value: "Sometimes": supported values: "Always", "IfNotPresent", "Never"',
      ],
    ],
    [
      'required missing',
      (v) => {
        delete (v.spec.containers[0] as Partial<(typeof v.spec.containers)[0]>).name;
      },
      ['spec.containers[0].name: Required value'],
    ],
    [
      'required null',
      (v) => {
        (v.spec as Record<string, unknown>).containers = null;
      },
      ['spec.containers: Required value'],
    ],
    [
      'required in a nested list',
      (v) => {
        v.spec.containers[0]!.env.push({} as { name: string; value: string });
      },
      ['spec.containers[0].env[1].name: Required value'],
    ],
    [
      'optional null is absent',
      (v) => {
        (v.spec as Record<string, unknown>).replicas = null;
        (v as Record<string, unknown>).metadata = null;
      },
      [],
    ],
    [
      'date-time',
      (v) => {
        v.metadata.creationTimestamp = 'yesterday';
      },
      [
        'metadata.creationTimestamp: Invalid value: "yesterday": must be an RFC 3339 date-time (e.g. 2006-01-02T15:04:05Z)',
      ],
    ],
    [
      'byte',
      (v) => {
        v.spec.blob = 'not base64!';
      },
      ['spec.blob: Invalid value: "not base64!": must be base64-encoded'],
    ],
    [
      'several errors in document order',
      (v) => {
        (v as Record<string, unknown>).kind = 1;
        (v.spec as Record<string, unknown>).paused = 0;
      },
      [
        'kind: Invalid value: "integer": must be of type string',
        'spec.paused: Invalid value: "integer": must be of type boolean',
      ],
    ],
  ])('%s', (_name, mutate, want) => {
    const v = cloneJson(good);
    mutate(v);
    expect(messages(v)).toEqual(want);
  });

  test('unknown fields are listed with their paths and not descended into', () => {
    const v = cloneJson(good) as Record<string, unknown> & typeof good;
    (v as Record<string, unknown>).status = { phase: 1 };
    (v.spec.containers[0] as Record<string, unknown>).imagee = 'typo';
    (v.spec.containers[0]!.ports[0] as Record<string, unknown>).hostPort = 1;
    (v.spec.extra as Record<string, unknown>).free = { form: true };
    (v.spec.config as Record<string, unknown>).whatever = 1;
    const result = checkSchema(v, podLike);
    expect(result.errors).toEqual([]);
    expect(result.unknownFields).toEqual([
      'spec.containers[0].ports[0].hostPort',
      'spec.containers[0].imagee',
      'status',
    ]);
    expect(result.value).toEqual({
      ...good,
      spec: {
        ...good.spec,
        extra: { ...good.spec.extra, free: { form: true } },
        config: { ...good.spec.config, whatever: 1 },
      },
    });
    expect((v.spec.containers[0] as Record<string, unknown>).imagee).toBe('typo');
  });

  test('a path prefix can be given', () => {
    expect(checkSchema({ x: 1 }, s.obj({ x: s.str() }), 'spec.template').errors.map((e) => e.path)).toEqual([
      'spec.template.x',
    ]);
    expect(checkSchema([1, 'a'], s.arr(s.str()), 'items').errors.map((e) => e.path)).toEqual(['items[0]']);
  });

  test('a preserved known field is still checked', () => {
    expect(messages({ spec: { containers: [], extra: { known: 1 } } })).toEqual([
      'spec.extra.known: Invalid value: "integer": must be of type string',
    ]);
  });
});

describe('pruneUnknownFields', () => {
  test('removes unknown fields, keeps preserved and free-form ones, does not mutate', () => {
    const v = {
      kind: 'Pod',
      status: { a: 1 },
      metadata: { name: 'p', labels: { a: 'b' }, bogus: 1 },
      spec: {
        containers: [{ name: 'c', imagee: 'x', ports: [{ containerPort: 1, hostPort: 2 }] }],
        config: { any: { thing: 1 } },
        extra: { known: 'k', other: { deep: 1 } },
        replicas: 'mistyped',
      },
    };
    const before = cloneJson(v);
    const { value, pruned } = pruneUnknownFields(v, podLike);
    expect(v).toEqual(before);
    expect(pruned).toEqual([
      'status',
      'metadata.bogus',
      'spec.containers[0].imagee',
      'spec.containers[0].ports[0].hostPort',
    ]);
    expect(value).toEqual({
      kind: 'Pod',
      metadata: { name: 'p', labels: { a: 'b' } },
      spec: {
        containers: [{ name: 'c', ports: [{ containerPort: 1 }] }],
        config: { any: { thing: 1 } },
        extra: { known: 'k', other: { deep: 1 } },
        replicas: 'mistyped',
      },
    });
    const out = value as typeof v;
    expect(out.spec.config).not.toBe(v.spec.config);
    expect(out.spec.extra.other).not.toBe(v.spec.extra.other);
  });

  test('mistyped containers are kept as they are', () => {
    expect(pruneUnknownFields({ spec: 'x' }, podLike)).toEqual({ value: { spec: 'x' }, pruned: [] });
    expect(pruneUnknownFields(null, podLike)).toEqual({ value: null, pruned: [] });
  });

  test('with a path prefix', () => {
    expect(pruneUnknownFields({ a: 1, b: 2 }, s.obj({ a: s.int() }), 'spec').pruned).toEqual(['spec.b']);
  });
});

describe('formats', () => {
  test.each([
    '2006-01-02T15:04:05Z',
    '2024-02-29T00:00:00Z',
    '2006-01-02T15:04:05.999999999Z',
    '2006-01-02T15:04:05+07:00',
    '2006-01-02T15:04:05-00:30',
    '2000-02-29T23:59:59Z',
  ])('%p is a date-time', (v) => expect(isRfc3339DateTime(v)).toBe(true));
  test.each([
    '',
    '2006-01-02',
    '2006-01-02 15:04:05Z',
    '2006-01-02T15:04:05',
    '2006-13-02T15:04:05Z',
    '2023-02-29T00:00:00Z',
    '1900-02-29T00:00:00Z',
    '2006-04-31T00:00:00Z',
    '2006-01-02T24:00:00Z',
    '2006-01-02T15:60:00Z',
    '2006-01-02T15:04:60Z',
    '2006-01-02t15:04:05z',
    '2006-01-02T15:04:05+24:00',
    '2006-01-02T15:04:05+0700',
  ])('%p is not', (v) => expect(isRfc3339DateTime(v)).toBe(false));

  test.each(['', 'aGVsbG8=', 'aGVsbA==', 'aGVs', 'aGVs\nbG8=', 'a+/b'])('%p is base64', (v) =>
    expect(isBase64(v)).toBe(true),
  );
  test.each(['a', 'aGVsbG8', 'aGVsbG8=x', '====', 'a-_b', 'aGV=sbG8'])('%p is not', (v) =>
    expect(isBase64(v)).toBe(false),
  );

  test.each<[unknown, string]>([
    [null, 'null'],
    [[], 'array'],
    [{}, 'object'],
    [1, 'integer'],
    [1.5, 'number'],
    ['', 'string'],
    [true, 'boolean'],
  ])('jsonTypeOf(%j) = %s', (v, t) => expect(jsonTypeOf(v)).toBe(t));
});

describe('nullListItemsAsEmptyObjects (Go decoding of typed lists)', () => {
  const schema = s.obj({
    spec: s.obj({ ports: s.arr(s.obj({ port: s.int() })), names: s.arr(s.str()) }),
    labels: s.map(s.arr(s.obj({ a: s.str() }))),
  });

  it('turns a null item of a list of structs into an empty struct, nothing else', () => {
    const value = { spec: { ports: [null, { port: 1 }], names: [null, 'x'] }, labels: { k: [null] } };
    expect(nullListItemsAsEmptyObjects(value, schema)).toEqual({
      spec: { ports: [{}, { port: 1 }], names: [null, 'x'] },
      labels: { k: [{}] },
    });
    expect(value.spec.ports[0]).toBeNull();
  });

  it('returns the same value when there is nothing to change', () => {
    const value = { spec: { ports: [{ port: 1 }] } };
    expect(nullListItemsAsEmptyObjects(value, schema)).toBe(value);
  });
});
