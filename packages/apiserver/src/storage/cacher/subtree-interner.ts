/**
 * Hash-consing of the small parts of cached objects: every object or array whose JSON is at
 * most `maxTextLength` characters is replaced by the one frozen copy this interner holds of
 * it, so the pods of one template share their containers, tolerations, conditions, owner
 * references and most of their managedFields instead of each holding its own. A part is
 * looked up by its JSON text (built bottom-up from the parts below it), so two parts are
 * shared only when equal throughout.
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
    for (const k of Object.keys(obj)) {
      if (k === '__proto__') continue;
      const v = obj[k];
      if (k === 'metadata' && isPlainObject(v) && !Object.isFrozen(v)) {
        for (const m of Object.keys(v)) if (m !== '__proto__') this.replace(v, m);
      } else this.replace(obj, k);
    }
  }

  private replace(parent: Record<string, unknown>, k: string): void {
    const c = this.walk(parent[k]);
    if (c.value !== parent[k]) parent[k] = c.value;
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  private walk(v: unknown): { value: unknown; text: string | undefined } {
    if (typeof v !== 'object' || v === null) return { value: v, text: JSON.stringify(v) };
    if (Object.isFrozen(v)) {
      // Interned before (a part a new version shares with the one before it): kept as it is,
      // and in the table again if it left it.
      const text = JSON.stringify(v);
      if (text.length > this.maxTextLength) return { value: v, text: undefined };
      if (!this.current.has(text)) this.current.set(text, this.previous.get(text) ?? v);
      return { value: v, text };
    }
    let small = true;
    let length = 2;
    const parts: string[] = [];
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        const c = this.walk(v[i]);
        if (c.value !== v[i]) v[i] = c.value;
        if (c.text === undefined) small = false;
        else if (small) {
          length += c.text.length + 1;
          if (length > this.maxTextLength) small = false;
          else parts.push(c.text);
        }
      }
      if (!small) return { value: v, text: undefined };
      return this.lookUp(v, `[${parts.join(',')}]`);
    }
    const o = v as Record<string, unknown>;
    for (const k of Object.keys(o)) {
      const c = this.walk(o[k]);
      // A decoded "__proto__" is an own property; assigning to it would set the prototype.
      if (c.value !== o[k] && k !== '__proto__') o[k] = c.value;
      if (c.text === undefined || k === '__proto__') small = false;
      else if (small) {
        const part = `${JSON.stringify(k)}:${c.text}`;
        length += part.length + 1;
        if (length > this.maxTextLength) small = false;
        else parts.push(part);
      }
    }
    if (!small) return { value: v, text: undefined };
    return this.lookUp(v, `{${parts.join(',')}}`);
  }

  private lookUp(v: object, text: string): { value: object; text: string } {
    let hit = this.current.get(text);
    if (!hit) {
      hit = this.previous.get(text);
      if (hit) this.current.set(text, hit);
    }
    if (hit) return { value: hit, text };
    Object.freeze(v);
    this.current.set(text, v);
    // Turns over while parts are kept; an interner with nothing in it holds no timer.
    this.timer ??= setInterval(() => this.turnOver(), this.generationMs).unref();
    return { value: v, text };
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
