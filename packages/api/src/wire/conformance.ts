import type {
  AnySchema,
  ArraySchema,
  BooleanSchema,
  IntegerSchema,
  IntOrStringSchema,
  MapSchema,
  NumberSchema,
  ObjectSchema,
  Schema,
  StringSchema,
} from '../schema.js';

/**
 * How the wire types of this folder stay true to the schemas of `resources/`: they are
 * written by hand and checked against the schema at compile time, not derived from it.
 *
 * Chosen over deriving (`Infer<typeof schema>`) because a wire type says more than the
 * schema can: what the API server guarantees after defaulting and validation (a Pod read
 * from the API has `spec.containers`, its conditions a `'True' | 'False' | 'Unknown'`
 * status), names for the parts components pass around (`Container`, `Taint`), and doc
 * comments. A derived type would make every field optional and every enum a string, and
 * readers would see a 60-line inferred type instead of `PodSpec`.
 *
 * The check: `Mismatches<T, S>` is `never` when every property of `T` is a property of the
 * schema `S` with a compatible type (recursively: objects, lists, maps, scalars, enum
 * values); otherwise it is the paths that are not, as string literals
 * (`'Pod.spec.containers[].imag: not in the schema'`). A wire type may leave fields out, make
 * optional fields required and keep an enum a plain `string`; it may not invent fields,
 * change their kind or name values outside an enum.
 * `wire-conformance.ts` lists one check per wire type, so `tsc` fails on drift.
 */
export type Mismatches<T, S extends Schema, Path extends string> = [NonNullable<T>] extends [never]
  ? never
  : ValueMismatches<NonNullable<T>, S, Path>;

/** Fails to compile unless `M` is `never`: `Conforms<Mismatches<Pod, PodSchema, 'Pod'>>`. */
export type Conforms<M extends never> = M;

type ValueMismatches<T, S extends Schema, Path extends string> = S extends AnySchema
  ? never
  : S extends ObjectSchema<infer P>
    ? [T] extends [object]
      ? [T] extends [readonly unknown[]]
        ? `${Path}: a list where the schema has an object`
        : PropertyMismatches<T, P, Path>
      : `${Path}: not an object`
    : S extends ArraySchema<infer I>
      ? [T] extends [readonly (infer E)[]]
        ? Mismatches<E, I, `${Path}[]`>
        : `${Path}: not a list`
      : S extends MapSchema<infer V>
        ? [T] extends [object]
          ? Mismatches<T[keyof T], V, `${Path}{}`>
          : `${Path}: not a map`
        : S extends StringSchema<infer E>
          ? [T] extends [string]
            ? string extends E[number] | T
              ? never
              : [T] extends [E[number]]
                ? never
                : `${Path}: values outside the schema's enum`
            : `${Path}: not a string`
          : S extends IntegerSchema | NumberSchema
            ? [T] extends [number]
              ? never
              : `${Path}: not a number`
            : S extends BooleanSchema
              ? [T] extends [boolean]
                ? never
                : `${Path}: not a boolean`
              : S extends IntOrStringSchema
                ? [T] extends [string | number]
                  ? never
                  : `${Path}: not an int or string`
                : `${Path}: unknown schema`;

/** The declared keys of `T`, without index signatures (ApiObject's `[field: string]: unknown`). */
type DeclaredKeys<T> = keyof {
  [K in keyof T as string extends K ? never : number extends K ? never : K]: true;
};

type PropertyMismatches<T, P, Path extends string> = {
  [K in DeclaredKeys<T>]-?: K extends keyof P & string
    ? P[K] extends Schema
      ? Mismatches<T[K], P[K], `${Path}.${K}`>
      : `${Path}.${K}: not a schema`
    : `${Path}.${K & string}: not in the schema`;
}[DeclaredKeys<T>];
