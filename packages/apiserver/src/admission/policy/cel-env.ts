/**
 * The CEL environments of admission policies, as Kubernetes declares them: `object`,
 * `oldObject` and `params` dynamic, `request` a `kubernetes.AdmissionRequest`,
 * `namespaceObject` a `kubernetes.Namespace`, `authorizer` the authorization library, and
 * `variables` an object whose fields are the policy's variables with their checked types.
 * Expressions are type-checked in a typed environment and evaluated in one where everything
 * but `authorizer` is dynamic (values are plain JSON as CEL sees it, cel-values.ts).
 */
import type { Environment } from '@marcbachmann/cel-js';
import { celBaseEnvironment } from '../../apiextensions/schema/index.js';
import { AUTHORIZER_TYPE, registerAuthzLibrary } from './authz-library.js';

/** Which optional variables an expression may use (Kubernetes' OptionalVariableDeclarations). */
export interface Declarations {
  hasParams: boolean;
  hasAuthorizer: boolean;
}

/** A variable's name and checked type (cel-js spelling), in declaration order. */
export type VariableTypes = ReadonlyArray<readonly [string, string]>;

export const REQUEST_TYPE = 'kubernetes.AdmissionRequest';
export const NAMESPACE_TYPE = 'kubernetes.Namespace';
const VARIABLES_TYPE = 'kubernetes.variables';

function declareObject(env: Environment, name: string, fields: Record<string, string>): void {
  env.registerType(name, { ctor: class {}, fields });
}

/** `kubernetes.AdmissionRequest` and `kubernetes.Namespace` with their parts (cel-go's field types; timestamps dyn). */
function declareRequestAndNamespace(env: Environment): void {
  declareObject(env, 'kubernetes.GroupVersionKind', { group: 'string', version: 'string', kind: 'string' });
  declareObject(env, 'kubernetes.GroupVersionResource', { group: 'string', version: 'string', resource: 'string' });
  declareObject(env, 'kubernetes.UserInfo', {
    username: 'string',
    uid: 'string',
    groups: 'list<string>',
    extra: 'map<string, list<string>>',
  });
  declareObject(env, REQUEST_TYPE, {
    kind: 'kubernetes.GroupVersionKind',
    resource: 'kubernetes.GroupVersionResource',
    subResource: 'string',
    requestKind: 'kubernetes.GroupVersionKind',
    requestResource: 'kubernetes.GroupVersionResource',
    requestSubResource: 'string',
    name: 'string',
    namespace: 'string',
    operation: 'string',
    userInfo: 'kubernetes.UserInfo',
    dryRun: 'bool',
    options: 'dyn',
  });
  declareObject(env, 'kubernetes.NamespaceSpec', { finalizers: 'list<string>' });
  declareObject(env, 'kubernetes.NamespaceCondition', {
    status: 'string',
    type: 'string',
    lastTransitionTime: 'dyn',
    message: 'string',
    reason: 'string',
  });
  declareObject(env, 'kubernetes.NamespaceStatus', {
    conditions: 'list<kubernetes.NamespaceCondition>',
    phase: 'string',
  });
  declareObject(env, 'kubernetes.NamespaceMetadata', {
    name: 'string',
    generateName: 'string',
    namespace: 'string',
    labels: 'map<string, string>',
    annotations: 'map<string, string>',
    UID: 'string',
    creationTimestamp: 'dyn',
    deletionGracePeriodSeconds: 'int',
    deletionTimestamp: 'dyn',
    generation: 'int',
    resourceVersion: 'string',
    finalizers: 'list<string>',
  });
  declareObject(env, NAMESPACE_TYPE, {
    metadata: 'kubernetes.NamespaceMetadata',
    spec: 'kubernetes.NamespaceSpec',
    status: 'kubernetes.NamespaceStatus',
  });
}

let base: Environment | undefined;

/** Kubernetes' libraries (cel-library.ts), the authorizer library and the request and namespace types. */
export function policyBaseEnvironment(): Environment {
  if (!base) {
    const env = celBaseEnvironment();
    registerAuthzLibrary(env);
    declareRequestAndNamespace(env);
    base = env;
  }
  return base;
}

/** What a typed environment declares `object`/`oldObject` and `params` as (dyn unless said). */
export interface TypedDeclarations extends Declarations {
  /** The object's type when known (type checking against a resource's schema). */
  objectType?: string;
  /** The params' type when known; `params` stays undeclared without `hasParams`. */
  paramsType?: string;
  /** The composed variables so far; without them `variables` is undeclared (no composition). */
  variables?: VariableTypes;
}

/**
 * A typed environment over `types` (an environment holding any schema types named by
 * `objectType`/`paramsType`, else the base): the compile-time environment of Kubernetes.
 */
export function typedEnvironment(types: Environment, d: TypedDeclarations): Environment {
  const env = types.clone();
  env.registerVariable('object', d.objectType ?? 'dyn');
  env.registerVariable('oldObject', d.objectType ?? 'dyn');
  env.registerVariable('request', REQUEST_TYPE);
  env.registerVariable('namespaceObject', NAMESPACE_TYPE);
  if (d.hasParams) env.registerVariable('params', d.paramsType ?? 'dyn');
  if (d.hasAuthorizer) env.registerVariable('authorizer', AUTHORIZER_TYPE);
  if (d.variables) {
    declareObject(env, VARIABLES_TYPE, Object.fromEntries(d.variables));
    env.registerVariable('variables', VARIABLES_TYPE);
  }
  return env;
}

let runtime: Environment | undefined;

/** The environment expressions are evaluated in: every variable dynamic but `authorizer`. */
export function runtimeEnvironment(): Environment {
  if (!runtime) {
    const env = policyBaseEnvironment().clone();
    for (const v of ['object', 'oldObject', 'params', 'request', 'namespaceObject', 'variables'])
      env.registerVariable(v, 'dyn');
    env.registerVariable('authorizer', AUTHORIZER_TYPE);
    runtime = env;
  }
  return runtime;
}

/**
 * A checked type as a declared field's type: object types become `dyn` (as Kubernetes'
 * variable composition does), `list`/`map` their dyn-parameterised forms.
 */
export function declarableType(t: string | undefined): string {
  if (t === undefined) return 'dyn';
  const s = t.trim();
  if (s === 'list') return 'list<dyn>';
  if (s === 'map') return 'map<dyn, dyn>';
  const generic = /^(list|map)<(.*)>$/.exec(s);
  if (generic) {
    const args = splitTypeArgs(generic[2] ?? '').map(declarableType);
    return `${generic[1]}<${args.join(', ')}>`;
  }
  const scalar = ['bool', 'int', 'uint', 'double', 'string', 'bytes', 'dyn'];
  return scalar.includes(s) || s === 'google.protobuf.Timestamp' || s === 'google.protobuf.Duration' ? s : 'dyn';
}

function splitTypeArgs(s: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (c === '<') depth++;
    else if (c === '>') depth--;
    else if (c === ',' && depth === 0) {
      out.push(s.slice(start, i));
      start = i + 1;
    }
  }
  out.push(s.slice(start));
  return out;
}

/** cel-go's spelling of a checked type in messages: `list(int)`, `map(string, dyn)`, `null_type`. */
export function celGoTypeName(t: string): string {
  if (t === 'list') return 'list(dyn)';
  if (t === 'map') return 'map(dyn, dyn)';
  if (t === 'null') return 'null_type';
  if (t === 'google.protobuf.Timestamp') return 'google.protobuf.Timestamp';
  return t.replace(/</g, '(').replace(/>/g, ')');
}
