import type { IncomingMessage } from 'node:http';
import YAML from 'yaml';
import { acceptedProtobufMediaTypes, badRequest, requestEntityTooLarge, unsupportedMediaType } from '@svc/api';
import { duplicateJsonFields } from '@svc/machinery';
import { advertisedMediaTypes, parseMediaType } from './media-types.js';

/** Largest request body accepted (Kubernetes' 3 MiB). */
export const MAX_BODY_BYTES = 3 * 1024 * 1024;

/** Reads the whole body, refusing more than `limit` bytes with 413 (and draining the rest). */
export async function readBody(req: IncomingMessage, limit = MAX_BODY_BYTES): Promise<Buffer> {
  const declared = Number(req.headers['content-length'] ?? '0');
  if (declared > limit) {
    req.resume();
    throw requestEntityTooLarge(limit);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const b = chunk as Buffer;
    size += b.length;
    if (size > limit) {
      req.resume();
      throw requestEntityTooLarge(limit);
    }
    chunks.push(b);
  }
  return Buffer.concat(chunks);
}

export type BodyCodec = 'json' | 'yaml' | 'protobuf';

/**
 * The codec of a request body from its Content-Type (415 when unsupported). A missing one means
 * JSON where JSON is accepted, as Kubernetes' NegotiateInputSerializer (client-go's scale client
 * sends none); patches must name their type.
 */
export function bodyCodec(
  contentType: string | undefined,
  accepted: Record<string, BodyCodec> = objectBodyTypes(),
): { codec: BodyCodec; mediaType: string } {
  const mt = contentType ? parseMediaType(contentType) : undefined;
  const name = mt ? `${mt.type}/${mt.subtype}` : 'application/json';
  const codec = accepted[name];
  if (!codec) throw unsupportedMediaType(contentType ?? '', advertisedMediaTypes());
  return { codec, mediaType: name };
}

/** Media types of whole-object bodies: JSON, YAML, and Protobuf in both spellings the naming accepts. */
export function objectBodyTypes(): Record<string, BodyCodec> {
  const types: Record<string, BodyCodec> = { 'application/json': 'json', 'application/yaml': 'yaml' };
  for (const t of acceptedProtobufMediaTypes()) types[t] = 'protobuf';
  return types;
}

export interface DecodedBody {
  value: unknown;
  /** Paths of keys that occur twice in one object (the parser kept the last value). */
  duplicates: string[];
}

/** Paths of repeated keys in a YAML document's mappings. */
function yamlDuplicates(node: unknown, path: string, out: string[]): void {
  if (YAML.isMap(node)) {
    const seen = new Set<string>();
    for (const pair of node.items) {
      const key = YAML.isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
      const p = path ? `${path}.${key}` : key;
      if (seen.has(key)) out.push(p);
      seen.add(key);
      yamlDuplicates(pair.value, p, out);
    }
  } else if (YAML.isSeq(node)) {
    node.items.forEach((item, i) => yamlDuplicates(item, `${path}[${i}]`, out));
  }
}

/** Parses a JSON or YAML body into a JSON value; malformed input is a 400 with the parser's reason. */
export function decodeBody(buf: Buffer, codec: Exclude<BodyCodec, 'protobuf'>): DecodedBody {
  const text = buf.toString('utf8');
  if (text.trim() === '') throw badRequest('the request body is empty');
  if (codec === 'json') {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (e) {
      throw badRequest(`couldn't get version/kind; json parse error: ${(e as Error).message}`);
    }
    return { value, duplicates: duplicateJsonFields(text) };
  }
  let docs: YAML.Document[];
  try {
    docs = YAML.parseAllDocuments(text, { uniqueKeys: false }) as YAML.Document[];
  } catch (e) {
    throw badRequest(`error converting YAML to JSON: ${(e as Error).message}`);
  }
  const real = docs.filter((d) => d.contents !== null);
  if (real.length !== 1)
    throw badRequest(`error converting YAML to JSON: expected exactly one YAML document, found ${real.length}`);
  const doc = real[0] as YAML.Document;
  if (doc.errors.length > 0)
    throw badRequest(`error converting YAML to JSON: yaml: ${doc.errors[0]?.message ?? 'invalid document'}`);
  const duplicates: string[] = [];
  yamlDuplicates(doc.contents, '', duplicates);
  return { value: doc.toJS({ maxAliasCount: 100 }) as unknown, duplicates };
}

export function encode(value: unknown, codec: Exclude<BodyCodec, 'protobuf'>): string {
  if (codec === 'yaml') return YAML.stringify(value, { aliasDuplicateObjects: false });
  return JSON.stringify(value);
}
