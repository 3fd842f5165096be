import protobuf from 'protobufjs/minimal.js';
import { builtinCatalog, isStatusError, s, type ObjectSchema } from '@svc/api';
import { decodeEnvelope, decodeProtobufObject, PROTOBUF_MAGIC } from './protobuf.js';

const { Writer } = protobuf;
const catalog = builtinCatalog();
const schemaOf = (plural: string): ObjectSchema => catalog.lookup('', 'v1', plural)?.schema as ObjectSchema;

function message(build: (w: protobuf.Writer) => void): Uint8Array {
  const w = Writer.create();
  build(w);
  return w.finish();
}
const str = (w: protobuf.Writer, field: number, v: string): void => {
  w.uint32((field << 3) | 2).string(v);
};
const bytes = (w: protobuf.Writer, field: number, v: Uint8Array): void => {
  w.uint32((field << 3) | 2).bytes(v);
};
/** A map entry `[key, value]` of map field `field`. */
const entry = (w: protobuf.Writer, field: number, [k, v]: [string, string | Uint8Array]): void =>
  bytes(
    w,
    field,
    message((e) => {
      str(e, 1, k);
      if (typeof v === 'string') str(e, 2, v);
      else bytes(e, 2, v);
    }),
  );

function envelope(apiVersion: string, kind: string, raw: Uint8Array): Uint8Array {
  const unknown = message((w) => {
    bytes(
      w,
      1,
      message((t) => {
        str(t, 1, apiVersion);
        str(t, 2, kind);
      }),
    );
    bytes(w, 2, raw);
  });
  return Buffer.concat([PROTOBUF_MAGIC, unknown]);
}

describe('Protobuf bodies', () => {
  it('decodes a ConfigMap: metadata with labels and a timestamp, data, binaryData, immutable', () => {
    const raw = message((w) => {
      bytes(
        w,
        1,
        message((m) => {
          str(m, 1, 'cm');
          str(m, 3, 'default');
          bytes(
            m,
            8,
            message((t) => {
              t.uint32(8).int64(1_700_000_000);
            }),
          );
          entry(m, 11, ['app', 'web']);
          str(m, 14, 'example.com/keep');
          bytes(
            m,
            17,
            message((mf) => {
              str(mf, 1, 'kubectl');
              str(mf, 2, 'Update');
              bytes(
                mf,
                7,
                message((f) => {
                  bytes(f, 1, Buffer.from('{"f:data":{}}'));
                }),
              );
            }),
          );
        }),
      );
      entry(w, 2, ['a', 'b']);
      entry(w, 2, ['empty', '']);
      entry(w, 3, ['bin', Buffer.from([1, 2, 3])]);
      w.uint32((4 << 3) | 0).bool(true);
    });
    const obj = decodeProtobufObject(envelope('v1', 'ConfigMap', raw), schemaOf('configmaps'));
    expect(obj).toEqual({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: 'cm',
        namespace: 'default',
        creationTimestamp: '2023-11-14T22:13:20Z',
        labels: { app: 'web' },
        finalizers: ['example.com/keep'],
        managedFields: [{ manager: 'kubectl', operation: 'Update', fieldsV1: { 'f:data': {} } }],
      },
      data: { a: 'b', empty: '' },
      binaryData: { bin: 'AQID' },
      immutable: true,
    });
  });

  it('leaves out empty strings of fields, as JSON from Go clients would', () => {
    const raw = message((w) => {
      bytes(
        w,
        1,
        message((m) => {
          str(m, 1, 'team-a');
          str(m, 2, '');
        }),
      );
      bytes(
        w,
        3,
        message((st) => str(st, 1, '')),
      );
    });
    expect(decodeProtobufObject(envelope('v1', 'Namespace', raw), schemaOf('namespaces'))).toEqual({
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: 'team-a' },
      status: {},
    });
  });

  it('skips unknown field numbers', () => {
    const raw = message((w) => {
      bytes(
        w,
        1,
        message((m) => str(m, 1, 'x')),
      );
      str(w, 99, 'future');
    });
    expect(decodeProtobufObject(envelope('v1', 'ConfigMap', raw), schemaOf('configmaps')).metadata).toEqual({
      name: 'x',
    });
  });

  it('keeps a map key named __proto__ as a key (a label, as JSON.parse keeps it)', () => {
    const raw = message((w) => {
      bytes(
        w,
        1,
        message((m) => {
          str(m, 1, 'x');
          entry(m, 11, ['__proto__', 'v']);
          entry(m, 11, ['app', 'web']);
        }),
      );
    });
    const labels = (
      decodeProtobufObject(envelope('v1', 'ConfigMap', raw), schemaOf('configmaps')).metadata as {
        labels: Record<string, string>;
      }
    ).labels;
    expect(Object.entries(labels)).toEqual([
      ['__proto__', 'v'],
      ['app', 'web'],
    ]);
    expect(Object.getPrototypeOf(labels)).toBe(Object.prototype);
  });

  it('refuses FieldsV1 JSON nested deeper than JSON bodies may be with a 400', () => {
    const managed = (depth: number): Uint8Array =>
      envelope(
        'v1',
        'ConfigMap',
        message((w) => {
          bytes(
            w,
            1,
            message((m) => {
              str(m, 1, 'x');
              bytes(
                m,
                17,
                message((f) => {
                  str(f, 1, 'mgr');
                  str(f, 6, 'FieldsV1');
                  bytes(
                    f,
                    7,
                    message((raw) => str(raw, 1, `${'{"f:a":'.repeat(depth)}{}${'}'.repeat(depth)}`)),
                  );
                }),
              );
            }),
          );
        }),
      );
    const ok = decodeProtobufObject(managed(10), schemaOf('configmaps'));
    expect((ok.metadata as { managedFields: unknown[] }).managedFields).toHaveLength(1);
    let err: unknown;
    try {
      decodeProtobufObject(managed(10_000), schemaOf('configmaps'));
    } catch (e) {
      err = e;
    }
    expect(isStatusError(err) && err.code).toBe(400);
    expect(String((err as Error).message)).toMatch(/fieldsV1: exceeded max depth of 256/);
  });

  it.each([
    ['no magic number', Buffer.from([1, 2, 3, 4, 5])],
    ['too short', Buffer.from([0x6b, 0x38])],
    ['truncated message', Buffer.concat([PROTOBUF_MAGIC, Buffer.from([0x12, 0x40, 0x01])])],
  ])('refuses %s with a 400', (_what, body) => {
    let err: unknown;
    try {
      decodeProtobufObject(body, schemaOf('configmaps'));
    } catch (e) {
      err = e;
    }
    expect(isStatusError(err) && err.code).toBe(400);
  });

  it('refuses a body that sets a loosely typed field with 415; skips field numbers it does not know, as Kubernetes does', () => {
    // A made-up kind whose spec.blob (field 3) has no Protobuf form.
    const loose: ObjectSchema = s.obj({
      metadata: schemaOf('configmaps').properties.metadata as ObjectSchema,
      spec: s.obj({ typed: s.str({ tag: 1 }), blob: s.any({ tag: 3 }) }, { tag: 2 }),
    });
    const raw = message((w) => {
      bytes(
        w,
        2,
        message((spec) => {
          str(spec, 1, 't');
          bytes(
            spec,
            3,
            message((b) => str(b, 1, 'x')),
          );
        }),
      );
    });
    let err: unknown;
    try {
      decodeProtobufObject(envelope('v1', 'X', raw), loose);
    } catch (e) {
      err = e;
    }
    expect(isStatusError(err) && err.code).toBe(415);
    const pod = message((w) => {
      bytes(
        w,
        2,
        message((spec) => {
          // Container field 99 has no meaning in Kubernetes' Container.
          bytes(
            spec,
            2,
            message((c) => {
              str(c, 1, 'c');
              bytes(
                c,
                99,
                message((x) => str(x, 1, 'cpu')),
              );
            }),
          );
        }),
      );
    });
    expect(decodeProtobufObject(envelope('v1', 'Pod', pod), schemaOf('pods'))).toMatchObject({
      spec: { containers: [{ name: 'c' }] },
    });
  });

  it('reads the envelope type meta', () => {
    const env = decodeEnvelope(envelope('authentication.k8s.io/v1', 'SelfSubjectReview', new Uint8Array()));
    expect([env.apiVersion, env.kind]).toEqual(['authentication.k8s.io/v1', 'SelfSubjectReview']);
  });
});

describe("Go's zero Time", () => {
  it('an empty Time message (what Go writes for a zero creationTimestamp) reads as absent, as null is in JSON', () => {
    const raw = message((w) => {
      bytes(
        w,
        1,
        message((m) => {
          str(m, 1, 'web');
          bytes(m, 8, new Uint8Array());
        }),
      );
    });
    const cm = decodeProtobufObject(envelope('v1', 'ConfigMap', raw), schemaOf('configmaps'));
    expect(cm).toEqual({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'web' } });
    // A Time with its fields set, even to the epoch, is a time.
    const epoch = message((w) => {
      bytes(
        w,
        1,
        message((m) => {
          str(m, 1, 'web');
          bytes(
            m,
            8,
            message((t) => t.uint32(8).int64(0)),
          );
        }),
      );
    });
    expect(decodeProtobufObject(envelope('v1', 'ConfigMap', epoch), schemaOf('configmaps')).metadata).toEqual({
      name: 'web',
      creationTimestamp: '1970-01-01T00:00:00Z',
    });
  });
});
