/**
 * The ValidatingAdmissionPolicy admission plugin (validate phase): informers over the
 * policies, their bindings and the namespaces (the server's own watch caches), each policy
 * compiled once per resourceVersion, its paramKind's informer started while it is in use.
 * Requests for the admission configuration types themselves (and the virtual review types)
 * are never intercepted, as in Kubernetes, so a policy cannot lock them out.
 */
import {
  forbidden,
  group,
  type ApiObject,
  type Catalog,
  type ResourceType,
  type ValidatingAdmissionPolicy,
  type ValidatingAdmissionPolicyBinding,
} from '@svc/api';
import type { Logger } from '@svc/component-base';
import type { Authorizer } from '../../authz/authorizer.js';
import { StoreInformer } from '../../authz/rbac/informer.js';
import type { GenericStore } from '../../registry/store.js';
import type { AdmissionAttributes, AdmissionPlugin } from '../admission.js';
import { compilePolicy, type CompiledPolicy } from './compiled-policy.js';
import { dispatch, type PolicyHook } from './dispatcher.js';
import { ParamSources } from './params.js';

export interface PolicyPluginDeps {
  catalog: Catalog;
  storeFor(r: ResourceType): GenericStore;
  /** A namespace straight from the server (when the informer has not seen it yet). */
  readNamespace(name: string): Promise<ApiObject | undefined>;
  authorizer: Authorizer;
  signal: AbortSignal;
  log: Logger;
}

/** Kubernetes' admission exclusions: admission configuration and virtual review resources. */
function excludedResources(): Set<string> {
  const ar = group('admissionregistration');
  return new Set([
    ...[
      'mutatingwebhookconfigurations',
      'validatingwebhookconfigurations',
      'validatingadmissionpolicies',
      'validatingadmissionpolicybindings',
      'mutatingadmissionpolicies',
      'mutatingadmissionpolicybindings',
    ].map((r) => `${ar}/${r}`),
    `${group('authentication')}/selfsubjectreviews`,
    `${group('authentication')}/tokenreviews`,
    ...['localsubjectaccessreviews', 'selfsubjectaccessreviews', 'selfsubjectrulesreviews', 'subjectaccessreviews'].map(
      (r) => `${group('authorization')}/${r}`,
    ),
  ]);
}

/** How long a request waits for the informers' first lists before it is refused (Kubernetes' 10 s). */
const READY_WAIT_MS = 10_000;

export class ValidatingAdmissionPolicyPlugin implements AdmissionPlugin {
  readonly name = 'ValidatingAdmissionPolicy';
  /** The policies, as the server stores them (shared with the status controller). */
  readonly policies: StoreInformer;
  private readonly bindings: StoreInformer;
  private readonly namespaces: StoreInformer;
  private readonly params: ParamSources;
  private readonly excluded = excludedResources();
  private readonly compiled = new Map<string, { version: string; compiled: CompiledPolicy }>();
  private readonly ready: Promise<void>;
  private isReady = false;
  private hooks: PolicyHook[] | undefined;
  private catalogRevision = -1;

  constructor(private readonly d: PolicyPluginDeps) {
    const typed =
      (plural: string, g = group('admissionregistration')) =>
      (): GenericStore => {
        const t = d.catalog.lookup(g, 'v1', plural);
        if (!t) throw new Error(`${plural} are not served`);
        return d.storeFor(t);
      };
    const onError = (what: string) => (e: unknown) =>
      d.log.warn(`${what} informer failed; relisting`, { error: (e as Error).message });
    this.policies = new StoreInformer(typed('validatingadmissionpolicies'), onError('ValidatingAdmissionPolicy'));
    this.bindings = new StoreInformer(typed('validatingadmissionpolicybindings'), onError('policy binding'));
    this.namespaces = new StoreInformer(typed('namespaces', ''), onError('namespace'));
    this.params = new ParamSources({ catalog: d.catalog, storeFor: d.storeFor, signal: d.signal, log: d.log });
    for (const i of [this.policies, this.bindings]) i.onChange(() => (this.hooks = undefined));
    for (const i of [this.policies, this.bindings, this.namespaces])
      i.run(d.signal).catch((e: unknown) => d.log.warn('policy informer ended', { error: String(e) }));
    this.ready = Promise.all([this.policies.synced, this.bindings.synced, this.namespaces.synced]).then(() => {
      this.isReady = true;
    });
  }

  async validate(a: AdmissionAttributes): Promise<void> {
    if (this.excluded.has(`${a.resource.group}/${a.resource.plural}`)) return;
    if (!this.isReady && !(await this.waitReady())) {
      const r = a.resource;
      const name = a.name || a.object?.metadata.name || 'Unknown';
      throw forbidden(
        `${r.group ? `${r.plural}.${r.group}` : r.plural} "${name}" is forbidden: not yet ready to handle request`,
      );
    }
    const hooks = this.currentHooks();
    if (hooks.length === 0) return;
    await dispatch(a, {
      hooks,
      deps: {
        catalog: this.d.catalog,
        authorizer: this.d.authorizer,
        namespace: (name) => this.namespaces.get('', name) ?? this.d.readNamespace(name),
      },
    });
  }

  private async waitReady(): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<void>((r) => (timer = setTimeout(r, READY_WAIT_MS)));
    await Promise.race([this.ready, late]);
    clearTimeout(timer);
    return this.isReady;
  }

  /** Every policy that has bindings, with them, compiled (recomputed after changes and new types). */
  private currentHooks(): PolicyHook[] {
    if (this.hooks && this.catalogRevision === this.d.catalog.revision) return this.hooks;
    this.catalogRevision = this.d.catalog.revision;
    const byPolicy = new Map<string, ValidatingAdmissionPolicyBinding[]>();
    for (const o of this.bindings.list()) {
      const b = o as ValidatingAdmissionPolicyBinding;
      const name = b.spec?.policyName ?? '';
      byPolicy.set(name, [...(byPolicy.get(name) ?? []), b]);
    }
    const hooks: PolicyHook[] = [];
    const paramKeys = new Set<string>();
    for (const [name, bindings] of [...byPolicy].sort(([x], [y]) => x.localeCompare(y))) {
      const policy = this.policies.get('', name) as ValidatingAdmissionPolicy | undefined;
      if (!policy) continue;
      bindings.sort((x, y) => (x.metadata.name ?? '').localeCompare(y.metadata.name ?? ''));
      const hook: PolicyHook = { policy, bindings, compiled: this.compile(policy) };
      const pk = policy.spec?.paramKind;
      if (pk) {
        const p = this.params.ensure(pk);
        if (p instanceof Error) hook.configurationError = p;
        else {
          hook.params = p.source;
          paramKeys.add(p.key);
        }
      }
      hooks.push(hook);
    }
    for (const name of this.compiled.keys()) if (!byPolicy.has(name)) this.compiled.delete(name);
    this.params.retain(paramKeys);
    this.hooks = hooks;
    return hooks;
  }

  private compile(policy: ValidatingAdmissionPolicy): CompiledPolicy {
    const name = policy.metadata.name ?? '';
    // The spec changes only with the generation (status writes keep it).
    const version = `${policy.metadata.uid ?? ''}/${policy.metadata.generation ?? ''}`;
    const hit = this.compiled.get(name);
    if (hit && hit.version === version) return hit.compiled;
    const compiled = compilePolicy(policy);
    this.compiled.set(name, { version, compiled });
    return compiled;
  }
}
