/**
 * Hash-consing of the small parts of cached objects: every object or array whose JSON is at
 * most `maxTextLength` characters is replaced by the one frozen copy this interner holds of
 * it, so the pods of one template share their containers, tolerations, conditions, owner
 * references and most of their managedFields instead of each holding its own. A part is
 * looked up by its JSON text, so two parts are shared only when equal throughout.
 *
 * The table keeps what was looked up in the last one or two generations (`generationMs`
 * each); a part dropped from it stays shared by the objects that hold it, and a later equal
 * part starts a new copy. Interned parts are frozen: cached objects are shared and never
 * mutated, and a write to a shared part throws instead of changing many objects.
 */
export class SubtreeInterner {
  private current = new Map<string, object>();
  private previous = new Map<string, object>();
  private timer: NodeJS.Timeout | undefined;
  private readonly maxTextLength: number;
  private readonly generationMs: number;

  constructor(o: { maxTextLength?: number; generationMs?: number } = {}) {
    this.maxTextLength = o.maxTextLength ?? 256;
    this.generationMs = o.generationMs ?? 60_000;
  }

  /** Parts the table holds now (both generations). */
  get size(): number {
    return this.current.size + this.previous.size;
  }

  /**
   * Interns the parts of a freshly decoded object that nobody holds yet, in place. The object
   * itself and its `metadata` are never interned or frozen (they are its own: a name, a uid, a
   * resourceVersion); everything below them may be.
   */
  internParts(obj: unknown): void {
    if (!isPlainObject(obj)) return;
    const { metadata } = obj;
    if (isPlainObject(metadata) && !Object.isFrozen(metadata)) this.internChildren(metadata);
    this.internChildren(obj, 'metadata');
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** The part to hold in place of `v`: the table's copy when it has one, else `v` with its parts interned. */
  private walk(v: unknown): unknown {
    if (typeof v !== 'object' || v === null) return v;
    if (Object.isFrozen(v)) {
      // Interned before (a part a new version shares with the one before it): kept as it is,
      // and in the table again if it left it.
      const text = JSON.stringify(v);
      if (text.length <= this.maxTextLength && !this.current.has(text))
        this.remember(text, this.previous.get(text) ?? v);
      return v;
    }
    // Small by a cheap estimate: its JSON text once, natively, and the table; only a part the
    // table does not have yet is walked into (its own parts may be shared already).
    if (estimate(v, this.maxTextLength) <= this.maxTextLength) {
      const text = JSON.stringify(v);
      if (text.length <= this.maxTextLength) {
        const hit = this.current.get(text) ?? this.previous.get(text);
        if (hit) {
          this.remember(text, hit);
          return hit;
        }
        this.internChildren(v);
        this.remember(text, Object.freeze(v));
        return v;
      }
    }
    this.internChildren(v);
    return v;
  }

  /** Interns each of `v`'s parts in place (but the one under `skip`). */
  private internChildren(v: object, skip?: string): void {
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        const c = this.walk(v[i]);
        if (c !== v[i]) v[i] = c;
      }
      return;
    }
    const o = v as Record<string, unknown>;
    for (const k of Object.keys(o)) {
      // A decoded "__proto__" is an own property; assigning to it would set the prototype.
      if (k === '__proto__' || k === skip) continue;
      const c = this.walk(o[k]);
      if (c !== o[k]) o[k] = c;
    }
  }

  private remember(text: string, part: object): void {
    this.current.set(text, part);
    // Turns over while parts are kept; an interner with nothing in it holds no timer.
    this.timer ??= setInterval(() => this.turnOver(), this.generationMs).unref();
  }

  private turnOver(): void {
    this.previous = this.current;
    this.current = new Map();
    if (this.previous.size === 0) this.stop();
  }
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * A lower bound of the length of `v`'s JSON text, counted only until it passes `budget`
 * (strings as their length and quotes, without escapes; the text itself decides).
 */
function estimate(v: unknown, budget: number): number {
  if (typeof v === 'string') return v.length + 2;
  if (typeof v !== 'object' || v === null) return typeof v === 'number' ? String(v).length : 5;
  let n = 2;
  if (Array.isArray(v)) {
    for (const x of v) {
      n += estimate(x, budget - n) + 1;
      if (n > budget) return n;
    }
    return n;
  }
  for (const k in v) {
    if (!Object.hasOwn(v, k)) continue;
    n += k.length + 4 + estimate((v as Record<string, unknown>)[k], budget - n);
    if (n > budget) return n;
  }
  return n;
}
