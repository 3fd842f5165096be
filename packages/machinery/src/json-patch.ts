/**
 * RFC 6902 JSON patch, applied with `fast-json-patch`. A malformed patch (wrong shape) is a
 * 400 BadRequest `StatusError`; a well-formed patch that does not apply to the document throws
 * `JsonPatchFailed` (a failed `test` throws its subclass `JsonPatchTestFailed`), a `StatusError`
 * answering 422 Invalid, as Kubernetes does. Neither input is modified and the result shares no
 * structure with them. Paths are resolved over own properties only.
 */
import jsonpatch from 'fast-json-patch';
import type { Operation } from 'fast-json-patch';
import { badRequest, StatusError, statusFailure } from '@svc/api';
import { cloneJson, isJsonObject } from './merge-patch.js';

export type JsonPatchOperation =
  | { op: 'add' | 'replace' | 'test'; path: string; value: unknown }
  | { op: 'remove'; path: string }
  | { op: 'move' | 'copy'; from: string; path: string };

/** A well-formed operation that cannot be applied to the document: 422 Invalid. */
export class JsonPatchFailed extends StatusError {
  constructor(
    message: string,
    readonly opIndex: number,
  ) {
    super(statusFailure('Invalid', message));
    this.name = 'JsonPatchFailed';
  }
}

/** A `test` operation whose path is missing or whose value differs. */
export class JsonPatchTestFailed extends JsonPatchFailed {
  constructor(message: string, opIndex: number) {
    super(message, opIndex);
    this.name = 'JsonPatchTestFailed';
  }
}

const OPS = ['add', 'remove', 'replace', 'move', 'copy', 'test'] as const;

function isPointer(p: string): boolean {
  return p === '' || (p.startsWith('/') && !/~[^01]|~$/.test(p));
}

function describe(v: unknown): string {
  return v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v;
}

/**
 * Checks a decoded patch document and returns its operations. As in Kubernetes, a document
 * that is not an array of objects is a 400 (it cannot be decoded), while an operation that
 * cannot be applied (unknown op, missing path or value, bad pointer) is a 422.
 */
export function parseJsonPatch(ops: unknown): JsonPatchOperation[] {
  const undecodable = (msg: string): Error => badRequest(`invalid JSON patch: ${msg}`);
  if (!Array.isArray(ops)) throw undecodable(`expected an array of operations, got ${describe(ops)}`);
  return ops.map((raw: unknown, i): JsonPatchOperation => {
    if (!isJsonObject(raw)) throw undecodable(`operation ${i} is not an object`);
    const bad = (msg: string): Error => new JsonPatchFailed(`invalid JSON patch: ${msg}`, i);
    const op = raw.op;
    if (op === undefined) throw bad(`operation ${i} has no "op"`);
    if (typeof op !== 'string' || !(OPS as readonly string[]).includes(op)) {
      throw bad(`operation ${i} has unknown op ${JSON.stringify(op)} (expected one of ${OPS.join(', ')})`);
    }
    const pointer = (field: 'path' | 'from'): string => {
      const v = raw[field];
      if (v === undefined) throw bad(`operation ${i} (${op}) has no "${field}"`);
      if (typeof v !== 'string') throw bad(`operation ${i} (${op}): "${field}" must be a string`);
      if (!isPointer(v)) throw bad(`operation ${i} (${op}): ${field} ${JSON.stringify(v)} is not a JSON pointer`);
      return v;
    };
    const path = pointer('path');
    switch (op) {
      case 'add':
      case 'replace':
      case 'test':
        if (!Object.hasOwn(raw, 'value') || raw.value === undefined) throw bad(`operation ${i} (${op}) has no "value"`);
        return { op, path, value: cloneJson(raw.value) };
      case 'move':
      case 'copy':
        return { op, from: pointer('from'), path };
      default:
        return { op: 'remove', path };
    }
  });
}

function tokens(pointer: string): string[] {
  return pointer === ''
    ? []
    : pointer
        .slice(1)
        .split('/')
        .map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));
}

const ARRAY_INDEX = /^(0|[1-9][0-9]*)$/;

type Lookup = { found: true; value: unknown } | { found: false };

function lookup(doc: unknown, toks: readonly string[]): Lookup {
  let cur = doc;
  for (const t of toks) {
    if (Array.isArray(cur)) {
      if (!ARRAY_INDEX.test(t) || Number(t) >= cur.length) return { found: false };
      cur = cur[Number(t)];
    } else if (isJsonObject(cur) && Object.hasOwn(cur, t)) {
      cur = cur[t];
    } else {
      return { found: false };
    }
  }
  return { found: true, value: cur };
}

class Applier {
  constructor(
    private readonly index: number,
    private readonly op: string,
  ) {}

  private fail(detail: string): JsonPatchFailed {
    const msg = `JSON patch operation ${this.index} (${this.op}) failed: ${detail}`;
    return this.op === 'test' ? new JsonPatchTestFailed(msg, this.index) : new JsonPatchFailed(msg, this.index);
  }

  /** Runs one primitive through fast-json-patch, turning its errors into ours. */
  private run(doc: unknown, op: Operation): unknown {
    try {
      return jsonpatch.applyOperation(doc, op, true, true, true, this.index).newDocument;
    } catch (e) {
      const name = (e as { name?: string }).name;
      if (name === 'TEST_OPERATION_FAILED')
        throw this.fail(`value at ${JSON.stringify(op.path)} is not equal to the expected value`);
      throw this.fail(`${(e as Error).message} (path ${JSON.stringify(op.path)})`);
    }
  }

  private existing(doc: unknown, pointer: string): unknown {
    const l = lookup(doc, tokens(pointer));
    if (!l.found) throw this.fail(`path ${JSON.stringify(pointer)} does not exist`);
    return l.value;
  }

  add(doc: unknown, path: string, value: unknown): unknown {
    const toks = tokens(path);
    if (toks.length > 0) {
      const parentPath = toks.slice(0, -1);
      const parent = lookup(doc, parentPath);
      const last = toks[toks.length - 1] ?? '';
      if (!parent.found) throw this.fail(`cannot add at ${JSON.stringify(path)}: its parent does not exist`);
      if (Array.isArray(parent.value)) {
        if (last !== '-' && !ARRAY_INDEX.test(last))
          throw this.fail(`cannot add at ${JSON.stringify(path)}: "${last}" is not an array index`);
        if (last !== '-' && Number(last) > parent.value.length) {
          throw this.fail(
            `cannot add at ${JSON.stringify(path)}: index ${last} is out of bounds (length ${parent.value.length})`,
          );
        }
      } else if (!isJsonObject(parent.value)) {
        throw this.fail(`cannot add at ${JSON.stringify(path)}: its parent is not an object or array`);
      }
    }
    return this.run(doc, { op: 'add', path, value });
  }

  remove(doc: unknown, path: string): unknown {
    if (path === '') throw this.fail('cannot remove the whole document');
    this.existing(doc, path);
    return this.run(doc, { op: 'remove', path });
  }

  apply(doc: unknown, o: JsonPatchOperation): unknown {
    switch (o.op) {
      case 'add':
        return this.add(doc, o.path, o.value);
      case 'remove':
        return this.remove(doc, o.path);
      case 'replace':
        this.existing(doc, o.path);
        return this.run(doc, { op: 'replace', path: o.path, value: o.value });
      case 'test':
        this.existing(doc, o.path);
        return this.run(doc, { op: 'test', path: o.path, value: o.value });
      case 'copy':
        return this.add(doc, o.path, cloneJson(this.existing(doc, o.from)));
      case 'move': {
        const value = this.existing(doc, o.from);
        if (o.path === o.from) return doc;
        if (o.path.startsWith(`${o.from}/`))
          throw this.fail(`cannot move ${JSON.stringify(o.from)} into its own child ${JSON.stringify(o.path)}`);
        return this.add(this.remove(doc, o.from), o.path, value);
      }
    }
  }
}

/** Applies `ops` (checked with `parseJsonPatch`) to a copy of `doc` and returns it. */
export function applyJsonPatch(doc: unknown, ops: unknown): unknown {
  let out = cloneJson(doc);
  parseJsonPatch(ops).forEach((o, i) => {
    out = new Applier(i, o.op).apply(out, o);
  });
  return out;
}
