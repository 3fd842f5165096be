/** A value or a promise of it: providers that need no I/O answer synchronously, KMS may not. */
export type MaybePromise<T> = T | Promise<T>;

/** What reading a stored value gives back. */
export interface Plaintext {
  data: Buffer;
  /**
   * The value was not written by the provider and key that encrypt now (an older key, a
   * later provider, an older KMS key ID): a write of the same object must still go to the
   * store so it is re-encrypted (Kubernetes' "stale" read).
   */
  stale: boolean;
}

/**
 * Turns values on their way to and from the store (Kubernetes' value.Transformer).
 * `authenticatedData` is the value's storage key: authenticated encryption binds a value to
 * its key, so a value copied to another key does not decrypt. Both directions throw an
 * `Error` whose message says what failed; callers turn it into a storage error.
 */
export interface ValueTransformer {
  fromStorage(data: Buffer, authenticatedData: Buffer): MaybePromise<Plaintext>;
  toStorage(data: Buffer, authenticatedData: Buffer): MaybePromise<Buffer>;
}

/** A transformer that needs no I/O (the local ciphers). */
export interface SyncValueTransformer extends ValueTransformer {
  fromStorage(data: Buffer, authenticatedData: Buffer): Plaintext;
  toStorage(data: Buffer, authenticatedData: Buffer): Buffer;
}

/** One transformer of a list, chosen for reading by the prefix a stored value starts with. */
export interface PrefixedTransformer {
  prefix: Buffer;
  transformer: ValueTransformer;
}

/**
 * A list of transformers, each behind a prefix (Kubernetes' prefix transformers). Writing
 * uses the first and puts its prefix in front. Reading tries, in order, every transformer
 * whose prefix the value starts with, on the rest of the value: the first that succeeds
 * answers, marked stale unless it is the first of the list. An empty prefix (identity)
 * matches everything and its failure is not reported; when none succeeds, the failures of
 * the others are (one alone as it is, several as `[a, b]`), or `noMatch` when no prefix
 * matched.
 */
export class PrefixTransformers implements ValueTransformer {
  constructor(
    private readonly list: readonly PrefixedTransformer[],
    private readonly noMatch: string,
  ) {
    if (list.length === 0) throw new Error('PrefixTransformers: no transformers');
  }

  fromStorage(data: Buffer, authenticatedData: Buffer): MaybePromise<Plaintext> {
    return this.readFrom({ index: 0, data, authenticatedData, errors: [] });
  }

  toStorage(data: Buffer, authenticatedData: Buffer): MaybePromise<Buffer> {
    const first = this.list[0] as PrefixedTransformer;
    const out = first.transformer.toStorage(data, authenticatedData);
    if (out instanceof Promise) return out.then((b) => withPrefix(first.prefix, b));
    return withPrefix(first.prefix, out);
  }

  private readFrom(r: ReadAttempt): MaybePromise<Plaintext> {
    for (let i = r.index; i < this.list.length; i++) {
      const { prefix, transformer } = this.list[i] as PrefixedTransformer;
      if (!startsWith(r.data, prefix)) continue;
      const fail = (e: unknown): void => {
        if (prefix.length > 0) r.errors.push(e instanceof Error ? e : new Error(String(e)));
      };
      let out: MaybePromise<Plaintext>;
      try {
        out = transformer.fromStorage(r.data.subarray(prefix.length), r.authenticatedData);
      } catch (e) {
        fail(e);
        continue;
      }
      if (out instanceof Promise) {
        return out.then(
          (p) => (i === 0 || p.stale ? p : { data: p.data, stale: true }),
          (e: unknown) => {
            fail(e);
            return this.readFrom({ ...r, index: i + 1 });
          },
        );
      }
      return i === 0 || out.stale ? out : { data: out.data, stale: true };
    }
    throw aggregateError(r.errors) ?? new Error(this.noMatch);
  }
}

interface ReadAttempt {
  index: number;
  data: Buffer;
  authenticatedData: Buffer;
  errors: Error[];
}

/** One error as it is, several as Kubernetes' aggregate prints them (`[a, b]`); none: undefined. */
export function aggregateError(errors: readonly Error[]): Error | undefined {
  if (errors.length === 0) return undefined;
  if (errors.length === 1) return errors[0];
  return new Error(`[${errors.map((e) => e.message).join(', ')}]`);
}

export function startsWith(data: Buffer, prefix: Buffer): boolean {
  return (
    prefix.length === 0 ||
    (data.length >= prefix.length && data.compare(prefix, 0, prefix.length, 0, prefix.length) === 0)
  );
}

function withPrefix(prefix: Buffer, data: Buffer): Buffer {
  return prefix.length === 0 ? data : Buffer.concat([prefix, data], prefix.length + data.length);
}
