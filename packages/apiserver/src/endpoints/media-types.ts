import { acceptedGroupSuffixes, naming } from '@svc/api';

export interface MediaType {
  type: string;
  subtype: string;
  params: Record<string, string>;
}

/** Parses one media type (`application/json;as=Table;v=v1;g=meta.svc.io`); undefined when malformed. */
export function parseMediaType(s: string): MediaType | undefined {
  const [full, ...rest] = s.split(';');
  const m = /^\s*([a-z0-9!#$&^_.+*-]+)\/([a-z0-9!#$&^_.+*-]+)\s*$/i.exec(full ?? '');
  if (!m) return undefined;
  const params: Record<string, string> = {};
  for (const p of rest) {
    const i = p.indexOf('=');
    if (i < 0) continue;
    params[p.slice(0, i).trim().toLowerCase()] = p.slice(i + 1).trim().replace(/^"(.*)"$/, '$1');
  }
  return { type: (m[1] ?? '').toLowerCase(), subtype: (m[2] ?? '').toLowerCase(), params };
}

/** The media types of an Accept header in order of preference (q values honoured, ties keep order). */
export function parseAccept(header: string | undefined): MediaType[] {
  if (!header) return [];
  const list = header.split(',').map((s, i) => ({ mt: parseMediaType(s), i }))
    .filter((x): x is { mt: MediaType; i: number } => x.mt !== undefined);
  const q = (mt: MediaType): number => { const v = Number(mt.params.q ?? '1'); return Number.isFinite(v) ? v : 0; };
  return list.filter((x) => q(x.mt) > 0).sort((a, b) => q(b.mt) - q(a.mt) || a.i - b.i).map((x) => x.mt);
}

export type ResponseFormat = {
  codec: 'json' | 'yaml';
  as?: 'Table' | 'PartialObjectMetadata' | 'PartialObjectMetadataList';
  /** The meta group the client named for `as=` (answers use its spelling). */
  group?: string;
};

/** What the server can answer in, for object responses. */
export function serverMediaTypes(): string[] {
  return ['application/json', 'application/yaml'];
}

/**
 * Picks the first Accept entry the server can produce; `as=` conversions are honoured only
 * when the caller supports them (`allowAs`). Undefined = 406.
 */
export function negotiate(header: string | undefined, allowAs: ReadonlyArray<NonNullable<ResponseFormat['as']>> = []): ResponseFormat | undefined {
  const accepted = parseAccept(header);
  if (accepted.length === 0) return { codec: 'json' };
  for (const mt of accepted) {
    const codec = codecOf(mt);
    if (!codec) continue;
    const as = mt.params.as;
    if (as === undefined) return { codec };
    if (!(allowAs as readonly string[]).includes(as)) continue;
    const g = mt.params.g ?? '';
    const v = mt.params.v ?? '';
    if (!acceptedGroupSuffixes().some((sfx) => g === `meta.${sfx}`) || (v !== 'v1')) continue;
    return { codec, as: as as ResponseFormat['as'], group: g };
  }
  return undefined;
}

function codecOf(mt: MediaType): 'json' | 'yaml' | undefined {
  if (mt.type === '*' && mt.subtype === '*') return 'json';
  if (mt.type !== 'application') return undefined;
  if (mt.subtype === '*' || mt.subtype === 'json') return 'json';
  if (mt.subtype === 'yaml') return 'yaml';
  return undefined;
}

export function contentTypeOf(codec: 'json' | 'yaml'): string {
  return codec === 'yaml' ? 'application/yaml' : 'application/json';
}

/** Media types listed in 406/415 answers. */
export function advertisedMediaTypes(): string[] {
  return ['application/json', 'application/yaml', naming().protobufMediaType];
}
