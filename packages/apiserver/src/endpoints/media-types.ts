import { acceptedGroupSuffixes, acceptedProtobufMediaTypes, naming } from '@svc/api';

export interface MediaType {
  type: string;
  subtype: string;
  params: Record<string, string>;
}

/** Parses one media type (`application/json;as=Table;v=v1;g=meta.<group suffix>`); undefined when malformed. */
export function parseMediaType(s: string): MediaType | undefined {
  const [full, ...rest] = s.split(';');
  const m = /^\s*([a-z0-9!#$&^_.+*-]+)\/([a-z0-9!#$&^_.+*-]+)\s*$/i.exec(full ?? '');
  if (!m) return undefined;
  const params: Record<string, string> = {};
  for (const p of rest) {
    const i = p.indexOf('=');
    if (i < 0) continue;
    params[p.slice(0, i).trim().toLowerCase()] = p
      .slice(i + 1)
      .trim()
      .replace(/^"(.*)"$/, '$1');
  }
  return { type: (m[1] ?? '').toLowerCase(), subtype: (m[2] ?? '').toLowerCase(), params };
}

/** The media types of an Accept header in order of preference (q values honoured, ties keep order). */
export function parseAccept(header: string | undefined): MediaType[] {
  if (!header) return [];
  const list = header
    .split(',')
    .map((s, i) => ({ mt: parseMediaType(s), i }))
    .filter((x): x is { mt: MediaType; i: number } => x.mt !== undefined);
  const q = (mt: MediaType): number => {
    const v = Number(mt.params.q ?? '1');
    return Number.isFinite(v) ? v : 0;
  };
  return list
    .filter((x) => q(x.mt) > 0)
    .sort((a, b) => q(b.mt) - q(a.mt) || a.i - b.i)
    .map((x) => x.mt);
}

export type ResponseCodec = 'json' | 'yaml' | 'protobuf';

export type ResponseFormat = {
  codec: ResponseCodec;
  as?: 'Table' | 'PartialObjectMetadata' | 'PartialObjectMetadataList';
  /** The meta group the client named for `as=` (answers use its spelling). */
  group?: string;
  /** Protobuf: the spelling the client asked for (answers use it as their Content-Type). */
  mediaType?: string;
  /**
   * Protobuf: the next acceptable Accept entry in JSON or YAML, used when an object has no
   * Protobuf form (loosely typed fields); none = such answers are a 406.
   */
  fallback?: ResponseFormat & { codec: 'json' | 'yaml' };
};

/** What the server can answer in, for object responses. */
export function serverMediaTypes(): string[] {
  return ['application/json', 'application/yaml', ...acceptedProtobufMediaTypes()];
}

/**
 * Picks the first Accept entry the server can produce; `as=` conversions are honoured only
 * when the caller supports them (`allowAs`), and only in JSON or YAML. When the pick is
 * Protobuf, the next acceptable JSON/YAML entry is kept as its fallback. Undefined = 406.
 */
export function negotiate(
  header: string | undefined,
  allowAs: ReadonlyArray<NonNullable<ResponseFormat['as']>> = [],
): ResponseFormat | undefined {
  const accepted = parseAccept(header);
  if (accepted.length === 0) return { codec: 'json' };
  let picked: ResponseFormat | undefined;
  for (const mt of accepted) {
    const f = formatOf(mt, allowAs);
    if (!f) continue;
    if (!picked) {
      if (f.codec !== 'protobuf') return f;
      picked = f;
    } else if (f.codec !== 'protobuf') {
      picked.fallback = f as ResponseFormat & { codec: 'json' | 'yaml' };
      break;
    }
  }
  return picked;
}

function formatOf(mt: MediaType, allowAs: ReadonlyArray<string>): ResponseFormat | undefined {
  const codec = codecOf(mt);
  if (!codec) return undefined;
  const as = mt.params.as;
  if (as === undefined) return codec === 'protobuf' ? { codec, mediaType: `${mt.type}/${mt.subtype}` } : { codec };
  if (codec === 'protobuf' || !allowAs.includes(as)) return undefined;
  const g = mt.params.g ?? '';
  const v = mt.params.v ?? '';
  if (!acceptedGroupSuffixes().some((sfx) => g === `meta.${sfx}`) || v !== 'v1') return undefined;
  return { codec, as: as as ResponseFormat['as'], group: g };
}

function codecOf(mt: MediaType): ResponseCodec | undefined {
  if (mt.type === '*' && mt.subtype === '*') return 'json';
  if (mt.type !== 'application') return undefined;
  if (mt.subtype === '*' || mt.subtype === 'json') return 'json';
  if (mt.subtype === 'yaml') return 'yaml';
  if (acceptedProtobufMediaTypes().includes(`${mt.type}/${mt.subtype}`)) return 'protobuf';
  return undefined;
}

/** Content-Type of an answer; Protobuf in the spelling the client asked for. */
export function contentTypeOf(codec: ResponseCodec, mediaType?: string): string {
  if (codec === 'protobuf') return mediaType ?? naming().protobufMediaType;
  return codec === 'yaml' ? 'application/yaml' : 'application/json';
}

/** Media types listed in 406/415 answers. */
export function advertisedMediaTypes(): string[] {
  return ['application/json', 'application/yaml', naming().protobufMediaType];
}
