import { NAMINGS } from '@svc/api/names';
import { CliError } from './errors.js';
import type { ResolvedObject } from './resolve-objects.js';
import type { Session } from './session.js';
import type { FieldValidation } from './write-options.js';

type OpenApiSchema = {
  type?: string;
  properties?: Record<string, OpenApiSchema>;
  additionalProperties?: OpenApiSchema | boolean;
  items?: OpenApiSchema;
  $ref?: string;
  allOf?: OpenApiSchema[];
  [k: string]: unknown;
};

interface OpenApiDoc {
  components?: { schemas?: Record<string, OpenApiSchema> };
}

/** Field validation moved to the server in 1.27 (`fieldValidation`); older servers get it from the client. */
export async function serverValidatesFields(session: Session): Promise<boolean> {
  try {
    const v = await session.call<{ major?: string; minor?: string }>('GET', '/version');
    const major = Number.parseInt(v.major ?? '1', 10);
    const minor = Number.parseInt(v.minor ?? '0', 10);
    return major > 1 || (major === 1 && minor >= 27);
  } catch {
    return true;
  }
}

function extension(s: OpenApiSchema, name: string): unknown {
  for (const n of Object.values(NAMINGS)) {
    const v = s[`${n.schemaExtensionPrefix}${name}`];
    if (v !== undefined) return v;
  }
  return undefined;
}

/**
 * Client-side validation against the server's OpenAPI v3 schemas (kubectl's fallback for
 * servers without server-side field validation): unknown fields and values of the wrong
 * JSON type. Strict refuses the objects with kubectl's message; Warn prints warnings.
 */
export class ClientValidator {
  private readonly docs = new Map<string, Promise<OpenApiDoc>>();
  constructor(private readonly session: Session) {}

  private doc(groupVersionPath: string): Promise<OpenApiDoc> {
    let d = this.docs.get(groupVersionPath);
    if (!d) {
      d = this.session.call<OpenApiDoc>('GET', `/openapi/v3/${groupVersionPath}`).catch(() => ({}));
      this.docs.set(groupVersionPath, d);
    }
    return d;
  }

  async check(objects: ResolvedObject[], level: FieldValidation): Promise<void> {
    for (const o of objects) {
      const r = o.resource;
      const doc = await this.doc(r.group ? `apis/${r.group}/${r.version}` : `api/${r.version}`);
      const schemas = doc.components?.schemas ?? {};
      const entry = Object.entries(schemas).find(([, s]) => {
        const gvks = extension(s, 'group-version-kind');
        return (
          Array.isArray(gvks) &&
          gvks.some(
            (g: { group?: string; version?: string; kind?: string }) =>
              g.group === r.group && g.version === r.version && g.kind === r.kind,
          )
        );
      });
      if (!entry) continue;
      const errors: string[] = [];
      const resolve = (s: OpenApiSchema): OpenApiSchema => {
        let cur = s;
        for (let i = 0; i < 20 && cur.$ref; i++) cur = schemas[cur.$ref.split('/').pop() ?? ''] ?? {};
        if (cur.allOf?.length === 1 && cur.allOf[0]) return resolve(cur.allOf[0]);
        return cur;
      };
      const walk = (v: unknown, s: OpenApiSchema, where: { path: string; type: string }): void => {
        const sch = resolve(s);
        if (extension(sch, 'preserve-unknown-fields') === true || extension(sch, 'int-or-string') === true) return;
        if (v === null || v === undefined) return;
        const t = sch.type;
        const jsType = Array.isArray(v) ? 'array' : typeof v;
        if (t === 'object' && jsType !== 'object')
          errors.push(
            `ValidationError(${where.path}): invalid type for ${where.type}: got "${jsType}", expected "map"`,
          );
        else if (t === 'array' && jsType !== 'array')
          errors.push(
            `ValidationError(${where.path}): invalid type for ${where.type}: got "${jsType}", expected "array"`,
          );
        else if (t === 'string' && jsType !== 'string')
          errors.push(
            `ValidationError(${where.path}): invalid type for ${where.type}: got "${jsType}", expected "string"`,
          );
        else if ((t === 'integer' || t === 'number') && jsType !== 'number')
          errors.push(
            `ValidationError(${where.path}): invalid type for ${where.type}: got "${jsType}", expected "${t}"`,
          );
        else if (t === 'boolean' && jsType !== 'boolean')
          errors.push(
            `ValidationError(${where.path}): invalid type for ${where.type}: got "${jsType}", expected "boolean"`,
          );
        if (jsType === 'object' && (t === 'object' || t === undefined)) {
          const obj = v as Record<string, unknown>;
          for (const [k, cv] of Object.entries(obj)) {
            const ps = sch.properties?.[k];
            if (ps)
              walk(cv, ps, { path: `${where.path}.${k}`, type: ps.$ref?.split('/').pop() ?? `${where.type}.${k}` });
            else if (sch.additionalProperties && typeof sch.additionalProperties === 'object') {
              walk(cv, sch.additionalProperties, { path: `${where.path}.${k}`, type: where.type });
            } else if (sch.properties && sch.additionalProperties === undefined) {
              errors.push(`ValidationError(${where.path}): unknown field "${k}" in ${where.type}`);
            }
          }
        } else if (jsType === 'array' && sch.items) {
          (v as unknown[]).forEach((item, i) =>
            walk(item, sch.items as OpenApiSchema, { path: `${where.path}[${i}]`, type: where.type }),
          );
        }
      };
      walk(o.obj, entry[1], { path: r.kind, type: entry[0] });
      if (errors.length === 0) continue;
      const data = errors.length === 1 ? errors[0] : `[${errors.join(', ')}]`;
      if (level === 'Strict') {
        throw new CliError(
          `error validating "${o.source}": error validating data: ${data ?? ''}; if you choose to ignore these errors, turn validation off with --validate=false`,
        );
      }
      for (const e of errors) this.session.io.err(`Warning: ${e}\n`);
    }
  }
}

/**
 * How a write validates fields: the `fieldValidation` query value for servers that
 * validate, or a client-side check before the request for servers that do not.
 */
export async function fieldValidationFor(
  session: Session,
  o: { level: FieldValidation; objects: ResolvedObject[] },
): Promise<FieldValidation | undefined> {
  if (o.level === 'Ignore') return 'Ignore';
  if (await serverValidatesFields(session)) return o.level;
  await new ClientValidator(session).check(o.objects, o.level);
  return undefined;
}
