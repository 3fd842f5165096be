import { builtinCatalog, naming, type ApiObject, type Catalog, type ObjectSchema, type NamingScheme } from '@svc/api';
import {
  decodeEnvelope,
  decodeProtobufObject,
  encodeProtobufObject,
  listSchemaOf,
  NotEncodable,
  statusSchema,
} from '@svc/machinery';
import type { GroupVersionResource } from './reflector.js';
import type { RestClient } from './rest-client.js';

const catalogs = new Map<NamingScheme, Catalog>();
const codecs = new WeakMap<RestClient, ClientCodec>();

/**
 * The codec of a client's typed requests. It lives here rather than on RestClient so that a
 * client that sends only untyped requests (svcctl) never loads the catalog and Protobuf.
 */
export function codecOf(client: RestClient): ClientCodec {
  let c = codecs.get(client);
  if (!c) {
    c = new ClientCodec(client.contentType);
    codecs.set(client, c);
  }
  return c;
}

/** The compiled-in catalog under the naming in use (built once per naming). */
function catalog(): Catalog {
  const scheme = naming().scheme;
  let c = catalogs.get(scheme);
  if (!c) {
    c = builtinCatalog();
    catalogs.set(scheme, c);
  }
  return c;
}

function isProtobuf(mediaType: string | undefined): boolean {
  return (mediaType ?? '').split(';')[0]?.trim() === naming().protobufMediaType;
}

/**
 * The wire format a client speaks (`--svc-api-content-type`): with Protobuf, bodies of
 * compiled-in types are sent as Protobuf and Protobuf answers are accepted, JSON second; a
 * value with no Protobuf form (a loosely typed field, a custom resource) goes as JSON, and
 * the server answers such values in JSON. Patches are always JSON.
 */
export class ClientCodec {
  readonly protobuf: boolean;

  constructor(contentType = 'application/json') {
    this.protobuf = isProtobuf(contentType);
  }

  /** The item schema of a compiled-in resource (undefined for others). */
  private schemaOf(gvr: GroupVersionResource): ObjectSchema | undefined {
    return catalog().lookup(gvr.group, gvr.version, gvr.resource)?.schema as ObjectSchema | undefined;
  }

  accept(gvr: GroupVersionResource): string {
    return this.protobuf && this.schemaOf(gvr) ? `${naming().protobufMediaType}, application/json` : 'application/json';
  }

  /** The request body for `obj` and its content type. */
  encode(gvr: GroupVersionResource, obj: ApiObject): { body: Buffer | object; contentType: string } {
    const schema = this.protobuf ? this.schemaOf(gvr) : undefined;
    if (schema && obj.apiVersion && obj.kind) {
      try {
        return {
          body: encodeProtobufObject(obj as unknown as Record<string, unknown>, schema, {
            apiVersion: obj.apiVersion,
            kind: obj.kind,
          }),
          contentType: naming().protobufMediaType,
        };
      } catch (e) {
        if (!(e instanceof NotEncodable)) throw e;
      }
    }
    return { body: obj, contentType: 'application/json' };
  }

  /** An answer's body by its content type: an object or list of `gvr`, or a Status. */
  decode<T>(gvr: GroupVersionResource, contentType: string | undefined, body: Buffer): T {
    if (!isProtobuf(contentType)) return JSON.parse(body.toString('utf8')) as T;
    const schema = this.schemaOf(gvr);
    const kind = decodeEnvelope(body).kind;
    if (kind === 'Status') return decodeProtobufObject(body, statusSchema) as T;
    if (!schema) throw new Error(`a Protobuf answer for ${gvr.resource} has no schema here`);
    return decodeProtobufObject(body, kind.endsWith('List') ? listSchemaOf(schema) : schema) as T;
  }
}
