/**
 * Executes a parsed Go template against JSON data as Go's text/template does for kubectl's
 * `-o go-template`: output is written as it is produced (so a failing template has printed
 * what came before), errors read `template: NAME:LINE:COL: executing "NAME" at <node>: ...`.
 */
import { formatValue, GoInt, goType, intValue, isMap, type Value } from './fmt.js';
import { FUNCS, FuncError, truth, type ParamKind } from './funcs.js';
import {
  nodeString,
  type ArgNode,
  type CommandNode,
  type ControlNode,
  type Node,
  type PipeNode,
  type Tree,
} from './parse.js';

export class TemplateExecError extends Error {}

/** What the option `missingkey` says about a missing map key: `<no value>` (default) or an error. */
export type MissingKey = 'default' | 'error';

const MISSING = Symbol('missing');
type Final = Value | typeof MISSING;

class Break {}
class Continue {}

type Positioned = ArgNode | CommandNode | PipeNode | { pos: number };

class State {
  private vars: Array<{ name: string; value: Value }> = [];
  private node?: Positioned;

  constructor(
    private readonly tree: Tree,
    private readonly o: { write: (s: string) => void; missingKey: MissingKey },
  ) {}

  run(data: Value): void {
    this.vars = [{ name: '$', value: data }];
    this.walkList(data, this.tree.root);
  }

  private at(n: Positioned): void {
    this.node = n;
  }

  private errorf(msg: string): never {
    const name = this.tree.name;
    const n = this.node;
    if (!n) throw new TemplateExecError(`template: ${name}: ${msg}`);
    const before = this.tree.text.slice(0, n.pos);
    const nl = before.lastIndexOf('\n');
    const col = nl < 0 ? n.pos : n.pos - (nl + 1);
    const line = 1 + (before.match(/\n/g)?.length ?? 0);
    const context = 'type' in n ? nodeString(n as ArgNode | CommandNode) : '';
    throw new TemplateExecError(
      `template: ${name}:${line}:${col}: executing ${JSON.stringify(name)} at <${context}>: ${msg}`,
    );
  }

  private walkList(dot: Value, list: Node[]): void {
    for (const n of list) this.walk(dot, n);
  }

  private walk(dot: Value, n: Node): void {
    switch (n.type) {
      case 'text':
        this.o.write(n.text);
        return;
      case 'action': {
        const v = this.evalPipeline(dot, n.pipe);
        if (n.pipe.decl.length === 0) this.o.write(v === undefined || v === null ? '<no value>' : formatValue(v));
        return;
      }
      case 'if':
      case 'with': {
        const mark = this.vars.length;
        const v = this.evalPipeline(dot, n.pipe);
        if (truth(v)) this.walkList(n.type === 'with' ? v : dot, n.list);
        else if (n.elseList) this.walkList(dot, n.elseList);
        this.vars.length = mark;
        return;
      }
      case 'range':
        this.walkRange(dot, n);
        return;
      case 'break':
        throw new Break();
      case 'continue':
        throw new Continue();
    }
  }

  private walkRange(dot: Value, n: ControlNode): void {
    this.at(n);
    const mark = this.vars.length;
    const val = this.evalPipeline(dot, n.pipe);
    const decl = n.pipe.decl;
    const one = (index: Value, elem: Value): boolean => {
      if (decl.length > 0) {
        if (n.pipe.isAssign) this.setVar(decl[0] ?? '', decl.length > 1 ? index : elem);
        else this.setTopVar(1, elem);
      }
      if (decl.length > 1) {
        if (n.pipe.isAssign) this.setVar(decl[1] ?? '', elem);
        else this.setTopVar(2, index);
      }
      const inner = this.vars.length;
      try {
        this.walkList(elem, n.list);
      } catch (e) {
        if (e instanceof Break) return false;
        if (!(e instanceof Continue)) throw e;
      } finally {
        this.vars.length = inner;
      }
      return true;
    };
    let ran = false;
    if (Array.isArray(val)) {
      for (let i = 0; i < val.length; i++) {
        ran = true;
        if (!one(new GoInt(BigInt(i)), val[i])) break;
      }
    } else if (isMap(val)) {
      for (const k of Object.keys(val).sort()) {
        ran = true;
        if (!one(k, val[k])) break;
      }
    } else if (intValue(val) !== undefined) {
      if (decl.length > 1) this.errorf("can't use two iteration variables over an integer");
      for (let i = 0n; i < (intValue(val) ?? 0n); i++) {
        ran = true;
        if (!one(new GoInt(i), new GoInt(i))) break;
      }
    } else if (val !== undefined && val !== null) {
      this.errorf(`range can't iterate over ${formatValue(val)}`);
    }
    if (!ran && n.elseList) this.walkList(dot, n.elseList);
    this.vars.length = mark;
  }

  private setVar(name: string, value: Value): void {
    for (let i = this.vars.length - 1; i >= 0; i--) {
      const v = this.vars[i];
      if (v && v.name === name) {
        v.value = value;
        return;
      }
    }
    this.errorf(`undefined variable: ${name}`);
  }

  private setTopVar(n: number, value: Value): void {
    const v = this.vars[this.vars.length - n];
    if (v) v.value = value;
  }

  private varValue(name: string): Value {
    for (let i = this.vars.length - 1; i >= 0; i--) {
      const v = this.vars[i];
      if (v && v.name === name) return v.value;
    }
    return this.errorf(`undefined variable: ${name}`);
  }

  private evalPipeline(dot: Value, pipe: PipeNode): Value {
    this.at(pipe);
    let value: Final = MISSING;
    for (const cmd of pipe.cmds) {
      value = this.evalCommand(dot, { cmd, final: value });
      // A nil interface{} becomes Go's invalid value between commands.
      if (value === null) value = undefined;
    }
    const result = value === MISSING ? undefined : value;
    for (const name of pipe.decl) {
      if (pipe.isAssign) this.setVar(name, result);
      else this.vars.push({ name, value: result });
    }
    return result;
  }

  private notAFunction(args: ArgNode[], final: Final): void {
    if (args.length > 1 || final !== MISSING)
      this.errorf(`can't give argument to non-function ${nodeString(args[0]!)}`);
  }

  private evalCommand(dot: Value, o: { cmd: CommandNode; final: Final }): Value {
    const { cmd, final } = o;
    const first = cmd.args[0]!;
    switch (first.type) {
      case 'field':
        this.at(first);
        return this.evalFieldChain({ dot, receiver: dot, node: first, idents: first.idents, args: cmd.args, final });
      case 'chain': {
        this.at(first);
        const head = this.evalArg(dot, { kind: 'value', node: first.node });
        return this.evalFieldChain({ dot, receiver: head, node: first, idents: first.fields, args: cmd.args, final });
      }
      case 'variable': {
        this.at(first);
        const [name = '$', ...fields] = first.idents;
        const v = this.varValue(name);
        if (fields.length === 0) {
          this.notAFunction(cmd.args, final);
          return v;
        }
        return this.evalFieldChain({ dot, receiver: v, node: first, idents: fields, args: cmd.args, final });
      }
      case 'identifier':
        return this.evalFunction(dot, { cmd, name: first.name, final });
      case 'pipe':
        this.notAFunction(cmd.args, final);
        return this.evalPipeline(dot, first);
      default:
        break;
    }
    this.at(first);
    this.notAFunction(cmd.args, final);
    switch (first.type) {
      case 'bool':
        return first.value;
      case 'dot':
        return dot;
      case 'nil':
        return this.errorf('nil is not a command');
      case 'number':
        return first.value;
      case 'string':
        return first.text;
    }
  }

  private evalFieldChain(o: {
    dot: Value;
    receiver: Value;
    node: ArgNode;
    idents: string[];
    args: ArgNode[];
    final: Final;
  }): Value {
    let r = o.receiver;
    const n = o.idents.length;
    for (let i = 0; i < n - 1; i++) r = this.evalField(r, { name: o.idents[i] ?? '', hasArgs: false });
    const hasArgs = o.args.length > 1 || o.final !== MISSING;
    return this.evalField(r, { name: o.idents[n - 1] ?? '', hasArgs });
  }

  private evalField(receiver: Value, o: { name: string; hasArgs: boolean }): Value {
    if (receiver === undefined) {
      if (this.o.missingKey === 'error') this.errorf(`nil data; no entry for key ${JSON.stringify(o.name)}`);
      return undefined;
    }
    if (receiver === null) this.errorf(`nil pointer evaluating interface {}.${o.name}`);
    if (isMap(receiver)) {
      if (o.hasArgs) this.errorf(`${o.name} is not a method but has arguments`);
      if (Object.hasOwn(receiver, o.name)) return receiver[o.name];
      if (this.o.missingKey === 'error') this.errorf(`map has no entry for key ${JSON.stringify(o.name)}`);
      return undefined;
    }
    return this.errorf(`can't evaluate field ${o.name} in type interface {}`);
  }

  private evalFunction(dot: Value, o: { cmd: CommandNode; name: string; final: Final }): Value {
    const { cmd, name, final } = o;
    this.at(cmd.args[0]!);
    const fn = FUNCS[name];
    if (!fn) return this.errorf(`${JSON.stringify(name)} is not a defined function`);
    const args = cmd.args.slice(1);
    const given = args.length + (final === MISSING ? 0 : 1);
    const fixed = fn.fixed.length;
    if (fn.variadic ? given < fixed : given !== fixed) {
      this.at(cmd);
      this.errorf(`wrong number of args for ${name}: want ${fn.variadic ? 'at least ' : ''}${fixed} got ${given}`);
    }
    const kindOf = (i: number): ParamKind => (i < fixed ? fn.fixed[i] : fn.variadic) ?? 'any';
    // and/or evaluate their arguments one at a time and stop at the answer.
    if (name === 'and' || name === 'or') {
      let v: Value = undefined;
      const all: Array<ArgNode | typeof MISSING> = [...args];
      if (final !== MISSING) all.push(MISSING);
      for (const a of all) {
        v = a === MISSING ? (final as Value) : this.evalArg(dot, { kind: 'value', node: a });
        if (truth(v) === (name === 'or')) return v;
      }
      return v;
    }
    const values = args.map((a, i) => this.evalArg(dot, { kind: kindOf(i), node: a }));
    if (final !== MISSING) values.push(this.checkValue({ value: final, kind: kindOf(args.length) }));
    try {
      return fn.call(values);
    } catch (e) {
      if (!(e instanceof FuncError)) throw e;
      this.at(cmd);
      return this.errorf(`error calling ${name}: ${e.message}`);
    }
  }

  private checkValue(o: { value: Value; kind: ParamKind }): Value {
    const { value, kind } = o;
    if (kind === 'value') return value;
    if (kind === 'any') return value === undefined ? null : value;
    if (value === undefined) return this.errorf('invalid value; expected string');
    if (typeof value !== 'string') {
      return this.errorf(`wrong type for value; expected string; got ${goType(value)}`);
    }
    return value;
  }

  private evalArg(dot: Value, o: { kind: ParamKind; node: ArgNode }): Value {
    const { kind, node } = o;
    this.at(node);
    switch (node.type) {
      case 'dot':
        return this.checkValue({ value: dot, kind });
      case 'nil':
        if (kind === 'string') this.errorf('cannot assign nil to string');
        return null;
      case 'field':
        return this.checkValue({
          value: this.evalFieldChain({ dot, receiver: dot, node, idents: node.idents, args: [node], final: MISSING }),
          kind,
        });
      case 'variable': {
        const [name = '$', ...fields] = node.idents;
        const v = this.varValue(name);
        const value =
          fields.length === 0
            ? v
            : this.evalFieldChain({ dot, receiver: v, node, idents: fields, args: [node], final: MISSING });
        return this.checkValue({ value, kind });
      }
      case 'chain': {
        const head = this.evalArg(dot, { kind: 'value', node: node.node });
        this.at(node);
        return this.checkValue({
          value: this.evalFieldChain({ dot, receiver: head, node, idents: node.fields, args: [node], final: MISSING }),
          kind,
        });
      }
      case 'pipe':
        return this.checkValue({ value: this.evalPipeline(dot, node), kind });
      case 'identifier':
        return this.checkValue({
          value: this.evalFunction(dot, {
            cmd: { type: 'command', pos: node.pos, args: [node] },
            name: node.name,
            final: MISSING,
          }),
          kind,
        });
      default:
        break;
    }
    if (kind === 'string') {
      if (node.type === 'string') return node.text;
      return this.errorf(`expected string; found ${nodeString(node)}`);
    }
    switch (node.type) {
      case 'bool':
        return node.value;
      case 'number':
        return node.value;
      case 'string':
        return node.text;
    }
  }
}

/** Runs `tree` on `data`, writing output through `write` as it goes; throws `TemplateExecError`. */
export function executeTemplate(
  tree: Tree,
  o: { data: Value; write: (s: string) => void; missingKey?: MissingKey },
): void {
  new State(tree, { write: o.write, missingKey: o.missingKey ?? 'default' }).run(o.data);
}
