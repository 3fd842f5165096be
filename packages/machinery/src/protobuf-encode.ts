import protobuf from 'protobufjs/minimal.js';
import { listMeta, s, type ObjectSchema, type Schema } from '@svc/api';
import { PROTOBUF_MAGIC, protobufFields } from './protobuf.js';

/**
 * Kubernetes' Protobuf wire form written through the schema's field numbers: the exact
 * inverse of `protobuf.ts`. Absent fields are not written; map entries go out in key order
 * (as Go's generated marshallers write them); repeated scalars are unpacked (proto2).
 * Loosely typed values (`s.any()` other than FieldsV1/RawExtension) cannot be written:
 * `NotEncodable`, and the caller answers in another format.
 */
const { Writer } = protobuf;
type WriterT = protobuf.Writer;

export class NotEncodable extends Error {
  constructor(
    readonly path: string,
    why: string,
  ) {
    super(`${path || '<root>'}: ${why}`);
  }
}

const LEN = 2;
const VARINT = 0;
const FIXED64 = 1;

function key(w: WriterT, field: number, wire: number): WriterT {
  return w.uint32((field << 3) | wire);
}

function sub(w: WriterT, field: number, build: (inner: WriterT) => void): void {
  const inner = Writer.create();
  build(inner);
  key(w, field, LEN).bytes(inner.finish());
}

/** Where a value goes: field number `tag` of a message, typed `schema`; `path` names it in errors. */
interface FieldSlot {
  tag: number;
  schema: Schema;
  path: string;
}

/** `2023-11-14T22:13:20.123456Z` → {seconds, nanos} (Time/MicroTime). */
function writeTime(w: WriterT, { tag: field, path }: FieldSlot, v: unknown): void {
  if (typeof v !== 'string') throw new NotEncodable(path, 'a timestamp must be a string');
  const m = /^(.*?)(?:\.(\d{1,9}))?(Z|[+-]\d\d:\d\d)$/.exec(v);
  const ms = Date.parse(m ? `${m[1] ?? ''}${m[3] ?? ''}` : v);
  if (!Number.isFinite(ms)) throw new NotEncodable(path, `not a timestamp: ${JSON.stringify(v)}`);
  const seconds = Math.floor(ms / 1000);
  const nanos = m?.[2] ? Number(m[2].padEnd(9, '0')) : 0;
  sub(w, field, (t) => {
    if (seconds !== 0) key(t, 1, VARINT).int64(seconds);
    if (nanos !== 0) key(t, 2, VARINT).int32(nanos);
  });
}

function writeScalarOrMessage(w: WriterT, slot: FieldSlot, v: unknown): void {
  const { tag: field, schema, path } = slot;
  switch (schema.type) {
    case 'string':
      if (schema.format === 'date-time') {
        writeTime(w, slot, v);
        return;
      }
      if (typeof v !== 'string') throw new NotEncodable(path, 'expected a string');
      if (schema.format === 'byte') key(w, field, LEN).bytes(Buffer.from(v, 'base64'));
      else key(w, field, LEN).string(v);
      return;
    case 'integer':
      if (typeof v !== 'number' || !Number.isInteger(v)) throw new NotEncodable(path, 'expected an integer');
      key(w, field, VARINT).int64(v);
      return;
    case 'number':
      if (typeof v !== 'number') throw new NotEncodable(path, 'expected a number');
      key(w, field, FIXED64).double(v);
      return;
    case 'boolean':
      if (typeof v !== 'boolean') throw new NotEncodable(path, 'expected a boolean');
      key(w, field, VARINT).bool(v);
      return;
    case 'int-or-string':
      if (typeof v !== 'string' && typeof v !== 'number')
        throw new NotEncodable(path, 'expected an integer or a string');
      if (schema.format === 'quantity') {
        sub(w, field, (q) => key(q, 1, LEN).string(String(v)));
      } else if (typeof v === 'number') {
        sub(w, field, (q) => {
          key(q, 1, VARINT).int64(0);
          key(q, 2, VARINT).int32(v);
        });
      } else {
        sub(w, field, (q) => {
          key(q, 1, VARINT).int64(1);
          key(q, 3, LEN).string(v);
        });
      }
      return;
    case 'object':
      if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new NotEncodable(path, 'expected an object');
      key(w, field, LEN).bytes(encodeMessage(v as Record<string, unknown>, schema, path));
      return;
    case 'any':
      if (schema.format === 'json-bytes') {
        sub(w, field, (raw) => key(raw, 1, LEN).bytes(Buffer.from(JSON.stringify(v), 'utf8')));
        return;
      }
      throw new NotEncodable(path, 'the field is typed loosely and has no Protobuf form');
    default:
      throw new NotEncodable(path, 'nested collections have no Protobuf form');
  }
}

/** The properties an embedded message holds, picked from the parent (undefined: none is set). */
function embeddedValue(obj: Record<string, unknown>, names: readonly string[]): Record<string, unknown> | undefined {
  const present = names.filter((n) => obj[n] !== undefined && obj[n] !== null);
  return present.length > 0 ? Object.fromEntries(present.map((n) => [n, obj[n]])) : undefined;
}

/**
 * One message of an object schema. apiVersion and kind without a field number (the
 * envelope's, and list items') are left out; any other value without a field number makes
 * the object `NotEncodable`, so nothing is ever dropped on the way (the caller falls back
 * to JSON).
 */
export function encodeMessage(obj: Record<string, unknown>, schema: ObjectSchema, path = ''): Uint8Array {
  for (const [name, v] of Object.entries(obj)) {
    if (v === undefined || v === null || name === 'apiVersion' || name === 'kind') continue;
    if (schema.properties[name]?.tag === undefined)
      throw new NotEncodable(path ? `${path}.${name}` : name, 'the field has no Protobuf field number');
  }
  const w = Writer.create();
  for (const { name, schema: fs, tag, embeds } of protobufFields(schema)) {
    const v = embeds ? embeddedValue(obj, embeds) : obj[name];
    if (v === undefined || v === null) continue;
    const p = path ? `${path}.${name}` : name;
    if (embeds) {
      key(w, tag, LEN).bytes(encodeMessage(v as Record<string, unknown>, fs as ObjectSchema, path));
    } else if (fs.type === 'map') {
      if (typeof v !== 'object' || Array.isArray(v)) throw new NotEncodable(p, 'expected a map');
      const entries = Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      for (const [k, val] of entries) {
        sub(w, tag, (e) => {
          key(e, 1, LEN).string(k);
          if (val !== undefined && val !== null)
            writeScalarOrMessage(e, { tag: 2, schema: fs.values, path: `${p}[${k}]` }, val);
        });
      }
    } else if (fs.type === 'array') {
      if (!Array.isArray(v)) throw new NotEncodable(p, 'expected a list');
      v.forEach((item, i) => {
        if (item === null || item === undefined)
          throw new NotEncodable(`${p}[${i}]`, 'null list items have no Protobuf form');
        writeScalarOrMessage(w, { tag, schema: fs.items, path: `${p}[${i}]` }, item);
      });
    } else {
      writeScalarOrMessage(w, { tag, schema: fs, path: p }, v);
    }
  }
  return w.finish();
}

/** The envelope: magic, then `Unknown{typeMeta{apiVersion, kind}, raw}`. */
export function encodeEnvelope(apiVersion: string, kind: string, raw: Uint8Array): Buffer {
  const w = Writer.create();
  sub(w, 1, (t) => {
    if (apiVersion) key(t, 1, LEN).string(apiVersion);
    if (kind) key(t, 2, LEN).string(kind);
  });
  key(w, 2, LEN).bytes(raw);
  return Buffer.concat([PROTOBUF_MAGIC, w.finish()]);
}

/** The type an envelope names. */
export interface EnvelopeType {
  apiVersion: string;
  kind: string;
}

/** An object of `schema`'s type in the envelope. */
export function encodeProtobufObject(obj: Record<string, unknown>, schema: ObjectSchema, type: EnvelopeType): Buffer {
  return encodeEnvelope(type.apiVersion, type.kind, encodeMessage(obj, schema));
}

/** `<Kind>List`: {metadata=1 ListMeta, items=2 repeated object}. */
export function listSchemaOf(itemSchema: ObjectSchema): ObjectSchema {
  return s.obj({ metadata: { ...listMeta, tag: 1 }, items: s.arr(itemSchema, { tag: 2 }) });
}

export function encodeProtobufList(
  list: Record<string, unknown>,
  itemSchema: ObjectSchema,
  type: EnvelopeType,
): Buffer {
  return encodeProtobufObject(list, listSchemaOf(itemSchema), type);
}

/** meta/v1 Status with Kubernetes' field numbers (StatusCause's `reason` is proto field 1, `type`). */
export const statusSchema: ObjectSchema = s.obj({
  apiVersion: s.str(),
  kind: s.str(),
  metadata: { ...listMeta, tag: 1 },
  status: s.str({ tag: 2 }),
  message: s.str({ tag: 3 }),
  reason: s.str({ tag: 4 }),
  details: s.obj(
    {
      name: s.str({ tag: 1 }),
      group: s.str({ tag: 2 }),
      kind: s.str({ tag: 3 }),
      causes: s.arr(s.obj({ reason: s.str({ tag: 1 }), message: s.str({ tag: 2 }), field: s.str({ tag: 3 }) }), {
        tag: 4,
      }),
      retryAfterSeconds: s.int32({ tag: 5 }),
      uid: s.str({ tag: 6 }),
    },
    { tag: 5 },
  ),
  code: s.int32({ tag: 6 }),
});

export function encodeProtobufStatus(status: Record<string, unknown>): Buffer {
  return encodeProtobufObject(status, statusSchema, { apiVersion: 'v1', kind: 'Status' });
}

/**
 * One watch event in Kubernetes' length-prefixed framing: 4-byte big-endian length, then
 * `WatchEvent{type=1, object=2 RawExtension{raw=1 = the envelope-encoded object}}`.
 */
export function encodeWatchEventFrame(type: string, envelope: Uint8Array): Buffer {
  const w = Writer.create();
  key(w, 1, LEN).string(type);
  sub(w, 2, (raw) => key(raw, 1, LEN).bytes(envelope));
  const msg = w.finish();
  const len = Buffer.alloc(4);
  len.writeUInt32BE(msg.length, 0);
  return Buffer.concat([len, msg]);
}
