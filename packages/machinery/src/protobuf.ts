import protobuf from 'protobufjs/minimal.js';
import { badRequest, unsupportedMediaType, naming, type Schema, type ObjectSchema } from '@svc/api';
import { setOwn } from './merge-patch.js';
import { MAX_NESTING_DEPTH, jsonNestingExceeds } from './nesting-depth.js';

/**
 * Kubernetes' Protobuf wire form, read through the schema's field numbers: the envelope
 * (4 magic bytes `k8s\0`, then `Unknown{typeMeta=1, raw=2, contentEncoding=3, contentType=4}`)
 * and the object message in `raw`. Well-known messages as in Kubernetes' generated.proto:
 * Time/MicroTime `{seconds=1, nanos=2}`, IntOrString `{type=1, intVal=2, strVal=3}`,
 * Quantity `{string=1}`, maps as repeated `{key=1, value=2}`, FieldsV1/RawExtension `{raw=1}`.
 */
export const PROTOBUF_MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]);

const { Reader } = protobuf;
type ReaderT = protobuf.Reader;

export interface ProtobufEnvelope {
  apiVersion: string;
  kind: string;
  raw: Uint8Array;
  contentEncoding: string;
  contentType: string;
}

function malformed(why: string): Error {
  return badRequest(`unable to decode the Protobuf body: ${why}`);
}

/** Reads the envelope; a wrong magic number or truncated bytes are a 400. */
export function decodeEnvelope(body: Uint8Array): ProtobufEnvelope {
  if (body.length < 4 || !PROTOBUF_MAGIC.equals(Buffer.from(body.subarray(0, 4)))) {
    throw malformed('the data does not start with the Protobuf magic number');
  }
  const out: ProtobufEnvelope = {
    apiVersion: '',
    kind: '',
    raw: new Uint8Array(),
    contentEncoding: '',
    contentType: '',
  };
  guard(() => {
    const r = Reader.create(body.subarray(4));
    while (r.pos < r.len) {
      const tag = r.uint32();
      switch (tag >>> 3) {
        case 1: {
          const tm = Reader.create(r.bytes());
          while (tm.pos < tm.len) {
            const t = tm.uint32();
            if (t >>> 3 === 1) out.apiVersion = tm.string();
            else if (t >>> 3 === 2) out.kind = tm.string();
            else tm.skipType(t & 7);
          }
          break;
        }
        case 2:
          out.raw = r.bytes();
          break;
        case 3:
          out.contentEncoding = r.string();
          break;
        case 4:
          out.contentType = r.string();
          break;
        default:
          r.skipType(tag & 7);
      }
    }
  });
  if (out.contentEncoding) throw malformed(`content encoding ${JSON.stringify(out.contentEncoding)} is not supported`);
  return out;
}

/** Runs a decoding step, turning the reader's range and format errors into a 400. */
function guard<T>(f: () => T): T {
  try {
    return f();
  } catch (e) {
    if ((e as { status?: unknown }).status) throw e;
    throw malformed((e as Error).message || 'truncated or malformed data');
  }
}

/** int64 values: protobufjs gives a Long when the `long` package is loaded, else a number. */
function longToNumber(v: number | { low: number; high: number }): number {
  return typeof v === 'number' ? v : v.high * 0x1_0000_0000 + (v.low >>> 0);
}

/**
 * A Time message; an empty one is Go's zero Time (what `null` is in JSON): undefined. A
 * MicroTime (`micro`) always shows six digits of fraction, a Time only when it has any.
 */
function timeOf(bytes: Uint8Array, micro: boolean): string | undefined {
  if (bytes.length === 0) return undefined;
  const r = Reader.create(bytes);
  let seconds = 0;
  let nanos = 0;
  while (r.pos < r.len) {
    const t = r.uint32();
    if (t >>> 3 === 1) seconds = longToNumber(r.int64());
    else if (t >>> 3 === 2) nanos = r.int32();
    else r.skipType(t & 7);
  }
  const iso = new Date(seconds * 1000).toISOString().replace(/\.\d{3}Z$/, '');
  return nanos > 0 || micro ? `${iso}.${String(Math.floor(nanos / 1000)).padStart(6, '0')}Z` : `${iso}Z`;
}

function intOrStringOf(bytes: Uint8Array, quantity: boolean): number | string {
  const r = Reader.create(bytes);
  if (quantity) {
    let v = '';
    while (r.pos < r.len) {
      const t = r.uint32();
      if (t >>> 3 === 1) v = r.string();
      else r.skipType(t & 7);
    }
    return v;
  }
  let type = 0;
  let intVal = 0;
  let strVal = '';
  while (r.pos < r.len) {
    const t = r.uint32();
    if (t >>> 3 === 1) type = longToNumber(r.int64());
    else if (t >>> 3 === 2) intVal = r.int32();
    else if (t >>> 3 === 3) strVal = r.string();
    else r.skipType(t & 7);
  }
  return type === 1 ? strVal : intVal;
}

/**
 * The Protobuf fields of an object schema in field-number order (the order Go's marshallers
 * write): numbered properties, and one object per embedded message (properties with
 * `embeddedIn`), named by the properties it holds.
 */
export interface ProtobufField {
  name: string;
  schema: Schema;
  tag: number;
  embeds?: readonly string[];
}
const fieldTables = new WeakMap<ObjectSchema, ProtobufField[]>();

const fieldsByTag = new WeakMap<ObjectSchema, Map<number, ProtobufField>>();

/** `protobufFields` by field number, for decoding. */
function fieldByTag(schema: ObjectSchema): Map<number, ProtobufField> {
  let m = fieldsByTag.get(schema);
  if (!m) fieldsByTag.set(schema, (m = new Map(protobufFields(schema).map((f) => [f.tag, f]))));
  return m;
}

export function protobufFields(schema: ObjectSchema): ProtobufField[] {
  let fields = fieldTables.get(schema);
  if (fields) return fields;
  fields = [];
  const embedded = new Map<number, Record<string, Schema>>();
  for (const [name, fs] of Object.entries(schema.properties)) {
    if (fs.tag === undefined) continue;
    if (fs.embeddedIn === undefined) fields.push({ name, schema: fs, tag: fs.tag });
    else {
      // Inside the embedded message the property is an ordinary field (or embedded deeper).
      const { embeddedIn, ...inner } = fs;
      const [outer = 0, ...deeper] = typeof embeddedIn === 'number' ? [embeddedIn] : embeddedIn;
      const field = (deeper.length > 0 ? { ...inner, embeddedIn: deeper } : inner) as Schema;
      embedded.set(outer, { ...embedded.get(outer), [name]: field });
    }
  }
  for (const [tag, properties] of embedded) {
    fields.push({
      name: `(embedded ${tag})`,
      schema: { type: 'object', properties, tag },
      tag,
      embeds: Object.keys(properties),
    });
  }
  fields.sort((a, b) => a.tag - b.tag);
  fieldTables.set(schema, fields);
  return fields;
}

/** What a value read is: its type, and its path for errors. */
interface ValueSlot {
  schema: Schema;
  path: string;
}

/** One scalar or message value of `schema` at the reader's position (wire type `wire`). */
function readValue(r: ReaderT, wire: number, { schema, path }: ValueSlot): unknown {
  switch (schema.type) {
    case 'string':
      if (schema.format === 'date-time') return timeOf(r.bytes(), schema.micro === true);
      if (schema.format === 'byte') return Buffer.from(r.bytes()).toString('base64');
      return r.string();
    case 'integer':
      return longToNumber(r.int64());
    case 'number':
      return wire === 5 ? r.float() : r.double();
    case 'boolean':
      return r.bool();
    case 'int-or-string':
      return intOrStringOf(r.bytes(), schema.format === 'quantity');
    case 'object':
      return decodeMessage(r.bytes(), schema, path);
    case 'any':
      if (schema.format === 'json-bytes') {
        const inner = Reader.create(r.bytes());
        let raw: Uint8Array | undefined;
        while (inner.pos < inner.len) {
          const t = inner.uint32();
          if (t >>> 3 === 1) raw = inner.bytes();
          else inner.skipType(t & 7);
        }
        if (!raw) return {};
        const text = Buffer.from(raw).toString('utf8');
        const value = JSON.parse(text) as unknown;
        // The same bound as JSON bodies: what is inside is recursed over later (managed fields).
        if (jsonNestingExceeds(text)) throw malformed(`${path}: exceeded max depth of ${MAX_NESTING_DEPTH}`);
        return value;
      }
      throw unsupportedMediaType(naming().protobufMediaType, ['application/json', 'application/yaml']);
    default:
      throw malformed(`${path}: unexpected nested collection`);
  }
}

/** Decodes one message of an object schema; unknown field numbers are skipped. */
export function decodeMessage(bytes: Uint8Array, schema: ObjectSchema, path = ''): Record<string, unknown> {
  const byTag = fieldByTag(schema);
  const out: Record<string, unknown> = {};
  return guard(() => {
    const r = Reader.create(bytes);
    while (r.pos < r.len) {
      const tag = r.uint32();
      const wire = tag & 7;
      const field = byTag.get(tag >>> 3);
      if (!field) {
        r.skipType(wire);
        continue;
      }
      const { name, schema: s } = field;
      const p = path ? `${path}.${name}` : name;
      if (field.embeds) {
        // Its fields are the parent's in JSON.
        Object.assign(out, decodeMessage(r.bytes(), s as ObjectSchema, path));
      } else if (s.type === 'map') {
        const entry = Reader.create(r.bytes());
        let key = '';
        const values = s.values;
        const bytesValue = values.type === 'string' && values.format === 'byte';
        let value: unknown = values.type === 'string' && !bytesValue ? '' : undefined;
        while (entry.pos < entry.len) {
          const t = entry.uint32();
          if (t >>> 3 === 1) key = entry.string();
          else if (t >>> 3 === 2) value = readValue(entry, t & 7, { schema: s.values, path: `${p}[${key}]` });
          else entry.skipType(t & 7);
        }
        const m = (out[name] ??= {}) as Record<string, unknown>;
        setOwn(m, key, value ?? (bytesValue ? '' : value)); // a key `__proto__` stays a key, as in JSON
      } else if (s.type === 'array') {
        const list = (out[name] ??= []) as unknown[];
        const item = s.items;
        const packable = item.type === 'integer' || item.type === 'boolean' || item.type === 'number';
        if (packable && wire === 2) {
          const packed = Reader.create(r.bytes());
          while (packed.pos < packed.len) list.push(readValue(packed, 0, { schema: item, path: p }));
        } else {
          list.push(readValue(r, wire, { schema: item, path: `${p}[${list.length}]` }));
        }
      } else {
        const v = readValue(r, wire, { schema: s, path: p });
        if (v === undefined) continue;
        // Go's encoder writes empty strings of non-pointer fields, which JSON (omitempty) leaves
        // out; a required field has no omitempty, so its empty string stays.
        if (v === '' && s.type === 'string' && !schema.required?.includes(name)) delete out[name];
        else out[name] = v;
      }
    }
    return out;
  });
}

/**
 * A Protobuf request body as a JSON object of `schema`'s type, with apiVersion and kind from
 * the envelope. Bodies that use fields this server types only loosely are a 415.
 */
export function decodeProtobufObject(body: Uint8Array, schema: ObjectSchema): Record<string, unknown> {
  const env = decodeEnvelope(body);
  const obj = decodeMessage(env.raw, schema);
  const out: Record<string, unknown> = {};
  if (env.apiVersion) out.apiVersion = env.apiVersion;
  if (env.kind) out.kind = env.kind;
  return Object.assign(out, obj);
}

/**
 * Length-prefixed watch frames (4-byte big-endian length, then `WatchEvent{type=1,
 * object=2 RawExtension{raw=1}}`) from the start of `buf`: the complete events, and how many
 * bytes they used (a partial frame at the end is left for the next read).
 */
export function decodeWatchFrames(buf: Uint8Array): { events: { type: string; object: Uint8Array }[]; used: number } {
  const events: { type: string; object: Uint8Array }[] = [];
  const b = Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength);
  let pos = 0;
  while (pos + 4 <= b.length) {
    const len = b.readUInt32BE(pos);
    if (pos + 4 + len > b.length) break;
    const msg = b.subarray(pos + 4, pos + 4 + len);
    const ev: { type: string; object: Uint8Array } = { type: '', object: new Uint8Array() };
    guard(() => {
      const r = Reader.create(msg);
      while (r.pos < r.len) {
        const t = r.uint32();
        if (t >>> 3 === 1) ev.type = r.string();
        else if (t >>> 3 === 2) {
          const raw = Reader.create(r.bytes());
          while (raw.pos < raw.len) {
            const rt = raw.uint32();
            if (rt >>> 3 === 1) ev.object = raw.bytes();
            else raw.skipType(rt & 7);
          }
        } else r.skipType(t & 7);
      }
    });
    events.push(ev);
    pos += 4 + len;
  }
  return { events, used: pos };
}
