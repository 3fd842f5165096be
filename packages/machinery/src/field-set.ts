/**
 * A set of field paths, as structured-merge-diff keeps managed fields: a tree whose nodes hold
 * `members` (paths that end here) and `children` (paths that continue). A node can be both a
 * member and a parent (a list item owned as such and some of its fields). Set operations return
 * new sets that share nothing with their inputs; only `insert` mutates.
 */
import { canonicalElement, compareElements, type FieldPath, type PathElement } from './field-path.js';
import { isJsonObject, setOwn, type JsonObject } from './merge-patch.js';

const NO_MEMBERS: ReadonlySet<PathElement> = new Set();
const NO_CHILDREN: ReadonlyMap<PathElement, FieldSet> = new Map();

export class FieldSet {
  // Allocated on first write: most nodes of a set are leaves' parents with few entries.
  private ownMembers: Set<PathElement> | undefined;
  private ownChildren: Map<PathElement, FieldSet> | undefined;

  private get members(): ReadonlySet<PathElement> {
    return this.ownMembers ?? NO_MEMBERS;
  }

  private get children(): ReadonlyMap<PathElement, FieldSet> {
    return this.ownChildren ?? NO_CHILDREN;
  }

  private addMember(pe: PathElement): void {
    (this.ownMembers ??= new Set()).add(pe);
  }

  private setChild(pe: PathElement, child: FieldSet): void {
    (this.ownChildren ??= new Map()).set(pe, child);
  }

  static fromPaths(paths: Iterable<FieldPath>): FieldSet {
    const s = new FieldSet();
    for (const p of paths) s.insert(p);
    return s;
  }

  /** Adds `path` (non-empty) as a member. Returns this set. */
  insert(path: FieldPath): this {
    if (path.length === 0) return this;
    // eslint-disable-next-line @typescript-eslint/no-this-alias -- a cursor walking down from this set, not a `self` for a closure
    let node: FieldSet = this;
    for (let i = 0; i < path.length - 1; i++) {
      const pe = path[i] as PathElement;
      let next = node.children.get(pe);
      if (!next) {
        next = new FieldSet();
        node.setChild(pe, next);
      }
      node = next;
    }
    node.addMember(path[path.length - 1] as PathElement);
    return this;
  }

  /** Whether `path` is a member (not merely a prefix of one). */
  has(path: FieldPath): boolean {
    if (path.length === 0) return false;
    // eslint-disable-next-line @typescript-eslint/no-this-alias -- a cursor walking down from this set, not a `self` for a closure
    let node: FieldSet | undefined = this;
    for (let i = 0; i < path.length - 1 && node; i++) node = node.children.get(path[i] as PathElement);
    return node !== undefined && node.members.has(path[path.length - 1] as PathElement);
  }

  hasMember(pe: PathElement): boolean {
    return this.members.has(pe);
  }

  /** The subset of paths below element `pe`, relative to it (a live view; do not mutate). */
  child(pe: PathElement): FieldSet | undefined {
    return this.children.get(pe);
  }

  /** Elements that are members or parents at this level, in structured-merge-diff order. */
  elements(): PathElement[] {
    return this.unorderedElements().sort(compareElements);
  }

  /** Elements that are members or parents at this level, in no particular order. */
  unorderedElements(): PathElement[] {
    const all = new Set<PathElement>(this.members);
    for (const pe of this.children.keys()) all.add(pe);
    return [...all];
  }

  isEmpty(): boolean {
    if (this.members.size > 0) return false;
    for (const c of this.children.values()) if (!c.isEmpty()) return false;
    return true;
  }

  /** Number of member paths. */
  size(): number {
    let n = this.members.size;
    for (const c of this.children.values()) n += c.size();
    return n;
  }

  clone(): FieldSet {
    const out = new FieldSet();
    for (const m of this.members) out.addMember(m);
    for (const [pe, c] of this.children) if (!c.isEmpty()) out.setChild(pe, c.clone());
    return out;
  }

  union(other: FieldSet): FieldSet {
    const out = this.clone();
    for (const m of other.members) out.addMember(m);
    for (const [pe, c] of other.children) {
      const mine = out.children.get(pe);
      const merged = mine ? mine.union(c) : c.clone();
      if (!merged.isEmpty()) out.setChild(pe, merged);
    }
    return out;
  }

  intersection(other: FieldSet): FieldSet {
    const out = new FieldSet();
    for (const m of this.members) if (other.members.has(m)) out.addMember(m);
    for (const [pe, c] of this.children) {
      const theirs = other.children.get(pe);
      if (!theirs) continue;
      const i = c.intersection(theirs);
      if (!i.isEmpty()) out.setChild(pe, i);
    }
    return out;
  }

  /** Paths of this set that are not members of `other` (a member of `other` keeps its children here). */
  difference(other: FieldSet): FieldSet {
    const out = new FieldSet();
    for (const m of this.members) if (!other.members.has(m)) out.addMember(m);
    for (const [pe, c] of this.children) {
      const theirs = other.children.get(pe);
      const d = theirs ? c.difference(theirs) : c.clone();
      if (!d.isEmpty()) out.setChild(pe, d);
    }
    return out;
  }

  /** Like `difference`, but a member of `other` also removes every path below it. */
  recursiveDifference(other: FieldSet): FieldSet {
    const out = new FieldSet();
    for (const m of this.members) if (!other.members.has(m)) out.addMember(m);
    for (const [pe, c] of this.children) {
      if (other.members.has(pe)) continue;
      const theirs = other.children.get(pe);
      const d = theirs ? c.recursiveDifference(theirs) : c.clone();
      if (!d.isEmpty()) out.setChild(pe, d);
    }
    return out;
  }

  /** Only the paths at or below a member of `prefixes` (the complement of `recursiveDifference`). */
  recursiveIntersection(prefixes: FieldSet): FieldSet {
    const out = new FieldSet();
    for (const m of this.members) if (prefixes.members.has(m)) out.addMember(m);
    for (const [pe, c] of this.children) {
      if (prefixes.members.has(pe)) {
        out.setChild(pe, c.clone());
        continue;
      }
      const theirs = prefixes.children.get(pe);
      if (!theirs) continue;
      const d = c.recursiveIntersection(theirs);
      if (!d.isEmpty()) out.setChild(pe, d);
    }
    return out;
  }

  equals(other: FieldSet): boolean {
    return this.difference(other).isEmpty() && other.difference(this).isEmpty();
  }

  /** Every member path: at each level members first, then children, each in element order. */
  paths(): FieldPath[] {
    const out: FieldPath[] = [];
    this.collect([], out);
    return out;
  }

  private collect(prefix: PathElement[], out: FieldPath[]): void {
    for (const m of [...this.members].sort(compareElements)) out.push([...prefix, m]);
    for (const pe of [...this.children.keys()].sort(compareElements)) {
      (this.children.get(pe) as FieldSet).collect([...prefix, pe], out);
    }
  }

  /** The FieldsV1 JSON form: `{"f:a":{".":{},"f:b":{}}}`, keys in structured-merge-diff order. */
  toFieldsV1(): JsonObject {
    const out: JsonObject = {};
    for (const pe of this.elements()) {
      const child = this.children.get(pe);
      if (child && !child.isEmpty()) {
        const inner = child.toFieldsV1();
        const body: JsonObject = {};
        if (this.members.has(pe)) body['.'] = {};
        for (const [k, v] of Object.entries(inner)) setOwn(body, k, v);
        setOwn(out, pe, body);
      } else if (this.members.has(pe)) {
        setOwn(out, pe, {});
      }
    }
    return out;
  }

  /**
   * Reads the FieldsV1 JSON form. Element keys are canonicalised (`k:` key order, JSON spacing).
   * Throws `Error` when the value is not a well-formed field set.
   */
  static fromFieldsV1(v: unknown): FieldSet {
    if (!isJsonObject(v)) throw new Error('fieldsV1 must be a JSON object');
    const out = new FieldSet();
    for (const [k, inner] of Object.entries(v)) {
      if (k === '.') throw new Error('"." is only allowed below a path element');
      out.read(k, inner);
    }
    return out;
  }

  private read(key: string, inner: unknown): void {
    if (!isJsonObject(inner)) throw new Error(`value of ${JSON.stringify(key)} must be a JSON object`);
    const pe = canonicalElement(key);
    const entries = Object.entries(inner);
    if (entries.length === 0) {
      this.addMember(pe);
      return;
    }
    const child = this.children.get(pe) ?? new FieldSet();
    for (const [k, v] of entries) {
      if (k === '.') {
        if (!isJsonObject(v) || Object.keys(v).length > 0) throw new Error('"." must map to {}');
        this.addMember(pe);
      } else {
        child.read(k, v);
      }
    }
    if (!child.isEmpty()) this.setChild(pe, child);
  }
}
