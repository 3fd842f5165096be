import type { Encryption } from './encryption-transformers.js';
import type { ValueTransformer } from './transformer.js';

/** Finds the transformer of a storage key; what `Etcd3Storage` asks for every value. */
export interface KeyTransformers {
  /** Undefined for keys outside the resource keys (`<store prefix>/<group or core>/<resource>/...`). */
  forKey(key: string): ValueTransformer | undefined;
}

/**
 * The transformers of the current encryption configuration by storage key. A reload swaps the
 * configuration in one step (`set`): every value is read or written whole with either the old
 * or the new one. Lookups are cached per resource prefix.
 */
export class ResourceTransformers implements KeyTransformers {
  private byPrefix = new Map<string, ValueTransformer>();
  private readonly base: string;

  constructor(
    storePrefix: string,
    private current: Encryption,
  ) {
    this.base = `${storePrefix}/`;
  }

  get encryption(): Encryption {
    return this.current;
  }

  /** Uses `next` from now on; returns the configuration it replaces. */
  set(next: Encryption): Encryption {
    const old = this.current;
    this.current = next;
    this.byPrefix = new Map();
    return old;
  }

  forKey(key: string): ValueTransformer | undefined {
    if (!key.startsWith(this.base)) return undefined;
    const groupEnd = key.indexOf('/', this.base.length);
    const resourceEnd = groupEnd < 0 ? -1 : key.indexOf('/', groupEnd + 1);
    if (resourceEnd < 0) return undefined;
    const prefix = key.slice(this.base.length, resourceEnd);
    let t = this.byPrefix.get(prefix);
    if (!t) {
      const group = key.slice(this.base.length, groupEnd);
      const resource = key.slice(groupEnd + 1, resourceEnd);
      t = this.current.transformerFor(group === 'core' ? '' : group, resource);
      this.byPrefix.set(prefix, t);
    }
    return t;
  }
}
