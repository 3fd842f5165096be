import type { IncomingMessage } from 'node:http';
import YAML from 'yaml';
import {
  acceptedProtobufMediaTypes,
  badRequest,
  isStatusError,
  requestEntityTooLarge,
  unsupportedMediaType,
} from '@svc/api';
import { MAX_NESTING_DEPTH, duplicateJsonFields, jsonNestingExceeds, valueNestingDepth } from '@svc/machinery';
import { advertisedMediaTypes, parseMediaType } from './media-types.js';

/** Largest request body accepted (Kubernetes' 3 MiB). */
export const MAX_BODY_BYTES = 3 * 1024 * 1024;

/**
 * Reads the whole body, refusing more than `limit` bytes with 413. A refused body is still read
 * to its end and dropped, so a keep-alive connection stays in step for its next request (leaving
 * a `for await` loop early destroys the request stream and stalls the connection instead).
 */
export function readBody(req: IncomingMessage, limit = MAX_BODY_BYTES): Promise<Buffer> {
  const declared = Number(req.headers['content-length'] ?? '0');
  if (declared > limit) {
    req.resume();
    return Promise.reject(requestEntityTooLarge(limit));
  }
  if (req.readableEnded) return Promise.resolve(Buffer.alloc(0));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const stop = (): void => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
    };
    const onData = (b: Buffer): void => {
      size += b.length;
      if (size <= limit) {
        chunks.push(b);
        return;
      }
      stop();
      req.resume(); // the rest is read and dropped
      reject(requestEntityTooLarge(limit));
    };
    const onEnd = (): void => {
      stop();
      resolve(Buffer.concat(chunks));
    };
    const onError = (e: Error): void => {
      stop();
      reject(e);
    };
    const onClose = (): void => {
      stop();
      reject(badRequest('the client closed the connection before the request body ended'));
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('close', onClose);
  });
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
  // A Content-Type that is not a media type is no more JSON than an unknown one.
  if (contentType && !mt) throw unsupportedMediaType(contentType, advertisedMediaTypes());
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

const tooDeep = (): never => {
  throw badRequest(`error converting YAML to JSON: yaml: exceeded max depth of ${MAX_NESTING_DEPTH}`);
};

/**
 * The YAML parser, giving up once collections nest deeper than `MAX_NESTING_DEPTH` (its stack
 * holds the open collections and the document). It keeps its own stack, so this check runs
 * before anything that recurses over the document (the composer, `toJS`) sees it.
 */
class DepthLimitedParser extends YAML.Parser {
  override *next(source: string): Generator<YAML.CST.Token, void> {
    yield* super.next(source);
    if (this.stack.length > MAX_NESTING_DEPTH + 2) tooDeep();
  }
}

/**
 * Paths of repeated keys in a YAML document's mappings. A mapping or sequence as a key (also
 * through an alias) is a 400: JSON has no such keys (yaml would stringify it, and log that).
 */
function yamlDuplicates(doc: YAML.Document): string[] {
  const out: string[] = [];
  const walk = (node: unknown, path: string): void => {
    if (YAML.isMap(node)) {
      const seen = new Set<string>();
      for (const pair of node.items) {
        const k = YAML.isAlias(pair.key) ? pair.key.resolve(doc) : pair.key;
        if (YAML.isCollection(k))
          throw badRequest('error converting YAML to JSON: yaml: invalid map key: a mapping or sequence');
        const key = YAML.isScalar(k) ? String(k.value) : String(k);
        const p = path ? `${path}.${key}` : key;
        if (seen.has(key)) out.push(p);
        seen.add(key);
        walk(pair.value, p);
      }
    } else if (YAML.isSeq(node)) {
      node.items.forEach((item, i) => walk(item, `${path}[${i}]`));
    }
  };
  walk(doc.contents, '');
  return out;
}

/**
 * The first value in a decoded document that JSON cannot hold, named (±Infinity and NaN from
 * `.inf`/`.nan`; dates, bytes, sets and maps from YAML 1.1's types); none: undefined.
 */
function nonJsonValue(value: unknown): string | undefined {
  const seen = new Set<object>();
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === 'number' && !Number.isFinite(v)) return String(v);
    if (typeof v !== 'object' || v === null || seen.has(v)) continue;
    seen.add(v);
    const proto: unknown = Object.getPrototypeOf(v);
    if (!Array.isArray(v) && proto !== Object.prototype && proto !== null) return v.constructor.name;
    for (const child of Array.isArray(v) ? v : Object.values(v)) stack.push(child);
  }
  return undefined;
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
    if (jsonNestingExceeds(text))
      throw badRequest(`couldn't get version/kind; json parse error: exceeded max depth of ${MAX_NESTING_DEPTH}`);
    return { value, duplicates: duplicateJsonFields(text) };
  }
  // What YAML.parseAllDocuments does, through the parser that stops at the depth limit.
  const lines = new YAML.LineCounter();
  let docs: YAML.Document[];
  try {
    // resolveKnownTags off: `!!binary`, `!!set`, `!!timestamp`... read as the strings and maps they are written as.
    const composer = new YAML.Composer({ uniqueKeys: false, resolveKnownTags: false, logLevel: 'error' });
    docs = Array.from(composer.compose(new DepthLimitedParser(lines.addNewLine).parse(text)));
  } catch (e) {
    if (isStatusError(e)) throw e;
    throw badRequest(`error converting YAML to JSON: ${(e as Error).message}`);
  }
  const real = docs.filter((d) => d.contents !== null);
  if (real.length !== 1)
    throw badRequest(`error converting YAML to JSON: expected exactly one YAML document, found ${real.length}`);
  const doc = real[0] as YAML.Document;
  const error = doc.errors[0];
  if (error) {
    const { line, col } = lines.linePos(error.pos[0]);
    throw badRequest(`error converting YAML to JSON: yaml: line ${line}, column ${col}: ${error.message}`);
  }
  const duplicates = yamlDuplicates(doc);
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: 100 });
  } catch (e) {
    // Alias bombs ("excessive alias count") and other refusals of the conversion.
    throw badRequest(`error converting YAML to JSON: yaml: ${(e as Error).message}`);
  }
  // Aliases can nest an anchor's depth again at every use, or refer to their own anchor.
  const depth = valueNestingDepth(value);
  if (depth === Infinity) throw badRequest('error converting YAML to JSON: yaml: an alias refers to its own anchor');
  if (depth > MAX_NESTING_DEPTH) tooDeep();
  if (excessiveAliasing(nodeCounts(value)))
    throw badRequest('error converting YAML to JSON: yaml: document contains excessive aliasing');
  const odd = nonJsonValue(value);
  if (odd) throw badRequest(`error converting YAML to JSON: yaml: unsupported value: ${odd}`);
  return { value, duplicates };
}

/**
 * Nodes of a decoded document (objects, arrays, scalars): `written` counts an object shared by
 * aliases once, `used` once per reference, which is what every later pass over the value walks.
 * Linear in the written nodes, no recursion; the value must not contain itself.
 */
function nodeCounts(value: unknown): { written: number; used: number } {
  if (typeof value !== 'object' || value === null) return { written: 1, used: 1 };
  const used = new Map<object, number>();
  let written = 0;
  const path: Array<{ node: object; children: unknown[]; next: number }> = [];
  const enter = (node: object): void => {
    written++;
    path.push({ node, children: Array.isArray(node) ? node : Object.values(node), next: 0 });
  };
  enter(value);
  while (path.length > 0) {
    const top = path[path.length - 1] as (typeof path)[number];
    if (top.next < top.children.length) {
      const c = top.children[top.next++];
      if (typeof c !== 'object' || c === null) written++;
      else if (!used.has(c)) enter(c);
      continue;
    }
    path.pop();
    let n = 1;
    for (const c of top.children) n += typeof c === 'object' && c !== null ? (used.get(c) ?? 0) : 1;
    used.set(top.node, n);
  }
  return { written, used: used.get(value) ?? written };
}

/**
 * Whether aliases make up too much of a document, by go-yaml's rule (Kubernetes decodes YAML
 * with it): past 1,000 nodes and 100 from aliases, at most 99% may come from aliases, falling
 * to 10% between 400,000 and 4,000,000 nodes. Wide anchors used many times pass yaml's own
 * alias count but cost a walk over every use in each pass that follows.
 */
function excessiveAliasing({ written, used }: { written: number; used: number }): boolean {
  const fromAliases = used - written;
  if (fromAliases <= 100 || used <= 1000) return false;
  const low = 400_000;
  const high = 4_000_000;
  const allowed = used <= low ? 0.99 : used >= high ? 0.1 : 0.99 - (0.89 * (used - low)) / (high - low);
  return fromAliases / used > allowed;
}

export function encode(value: unknown, codec: Exclude<BodyCodec, 'protobuf'>): string {
  if (codec === 'yaml') return YAML.stringify(value, { aliasDuplicateObjects: false });
  return JSON.stringify(value);
}
