import { fieldErrorMessage, group, internalError, type ApiObject, type ResourceType } from '@svc/api';
import { applyJsonPatch, checkSchema, isJsonObject } from '@svc/machinery';
import { clone, deepEqual } from '../../registry/object-utils.js';
import type { AdmissionAttributes, AdmissionPlugin } from '../admission.js';
import { callWebhook } from './call.js';
import { settle, waitReady, type WebhookDeps } from './dispatcher.js';
import { CallingWebhookError, rejectionStatus } from './errors.js';
import { shouldCallHook, type Invocation, type Versioned } from './matching.js';
import { isExemptConfigurationResource } from './rules.js';
import type { WebhookAccessor } from './source.js';

export const MUTATING_WEBHOOK_PLUGIN = 'MutatingAdmissionWebhook';

/** Kubernetes' webhookReinvokeContext: what the webhooks did in the first round of one request. */
class ReinvokeContext {
  lastOutput?: ApiObject;
  /** IfNeeded webhooks called since the object last changed. */
  previouslyInvoked = new Set<string>();
  /** The webhooks the second round calls. */
  readonly reinvoke = new Set<string>();

  requireReinvokingPreviouslyInvoked(): void {
    for (const uid of this.previouslyInvoked) this.reinvoke.add(uid);
    this.previouslyInvoked = new Set();
  }
}

/**
 * The objects of one request as the webhooks so far left them, in the version last asked for
 * (Kubernetes' VersionedAttributes): in the request's version the object is the store's own,
 * patched in place; in another it is a converted copy, converted back at the end when patched.
 */
class Objects {
  private current: Versioned;
  /** `current.object` holds patches the store's object does not have yet. */
  private dirty = false;

  constructor(
    private readonly attrs: AdmissionAttributes,
    private readonly deps: WebhookDeps,
  ) {
    this.current = { resource: attrs.resource, object: attrs.object, oldObject: attrs.oldObject };
  }

  get view(): { object?: ApiObject; oldObject?: ApiObject } {
    return this.current;
  }

  async versioned(r: ResourceType): Promise<Versioned> {
    const c = this.current;
    if (c.resource === r) return c;
    const convert = (o: ApiObject | undefined): Promise<ApiObject | undefined> =>
      o ? this.deps.converter.convert(o, { from: c.resource, to: r }) : Promise.resolve(undefined);
    const [object, oldObject] = await Promise.all([convert(c.object), convert(c.oldObject)]);
    this.current = { resource: r, object, oldObject };
    return this.current;
  }

  /** Takes a webhook's patched object (`v` is the current one). */
  replace(v: Versioned, patched: ApiObject): void {
    const own = this.attrs.object;
    if (v.resource === this.attrs.resource && own) {
      replaceContents(own, patched);
      v.object = own;
      this.dirty = false;
    } else {
      v.object = patched;
      this.dirty = true;
    }
  }

  /** Writes patches made in another version back into the store's object. */
  async finish(): Promise<void> {
    const c = this.current;
    const own = this.attrs.object;
    if (!this.dirty || !c.object || !own) return;
    replaceContents(own, await this.deps.converter.convert(c.object, { from: c.resource, to: this.attrs.resource }));
  }
}

function replaceContents(obj: ApiObject, next: ApiObject): void {
  for (const k of Object.keys(obj)) delete obj[k];
  Object.assign(obj, next);
}

/**
 * MutatingAdmissionWebhook (Kubernetes' mutating dispatcher): the matching webhooks one after
 * the other in configuration-name order, each seeing the object as the ones before left it;
 * JSON patches are applied to the object (a patch the object cannot take, or one for DELETE,
 * is a 500 whatever the failurePolicy). A webhook that changed the object asks the chain to run
 * once more, and then only `reinvocationPolicy: IfNeeded` webhooks called before the change
 * run again (and, after in-tree plugins changed the object, all of them called so far).
 */
export class MutatingWebhookPlugin implements AdmissionPlugin {
  readonly name = MUTATING_WEBHOOK_PLUGIN;

  constructor(private readonly deps: WebhookDeps) {}

  async admit(attrs: AdmissionAttributes): Promise<void> {
    if (isExemptConfigurationResource(attrs.resource)) return;
    await waitReady(this.deps, attrs);
    const hooks = this.deps.source.webhooks();
    if (hooks.length === 0) return;
    const reinvocation = attrs.reinvocation;
    let rc = reinvocation?.values.get(this.name) as ReinvokeContext | undefined;
    if (!rc) {
      rc = new ReinvokeContext();
      reinvocation?.values.set(this.name, rc);
    }
    const round = reinvocation?.isReinvoke ? 1 : 0;
    // In-tree plugins changed the object in the second round: every webhook called so far runs again.
    if (round === 1 && !deepEqual(rc.lastOutput, attrs.object)) rc.requireReinvokingPreviouslyInvoked();
    try {
      await this.dispatch(attrs, { hooks, rc, round });
    } finally {
      if (reinvocation) rc.lastOutput = clone(attrs.object);
    }
  }

  private async dispatch(
    attrs: AdmissionAttributes,
    o: { hooks: readonly WebhookAccessor[]; rc: ReinvokeContext; round: number },
  ): Promise<void> {
    const objects = new Objects(attrs, this.deps);
    for (const [index, hook] of o.hooks.entries()) {
      const invocation = await shouldCallHook(
        { hook, attrs, current: objects.view, versioned: (r) => objects.versioned(r) },
        this.deps,
      );
      if (!invocation) continue;
      // A webhook skipped in the first round is not called for the first time in the second.
      if (o.round === 1 && !o.rc.reinvoke.has(hook.uid)) continue;
      const versioned = await objects.versioned(invocation.resource);
      const started = performance.now();
      let changed = false;
      let error: unknown;
      try {
        changed = await this.call({ invocation, attrs, versioned, objects, index, round: o.round });
      } catch (e) {
        error = e;
      }
      this.annotateMutation(attrs, { hook, index, round: o.round, changed });
      if (changed) {
        o.rc.requireReinvokingPreviouslyInvoked();
        if (attrs.reinvocation) attrs.reinvocation.shouldReinvoke = true;
      }
      if (hook.hook.reinvocationPolicy === 'IfNeeded') o.rc.previouslyInvoked.add(hook.uid);
      settle(this.deps, { hook, step: 'admit', attrs, started, index, round: o.round, error });
    }
    await objects.finish();
  }

  /** Calls one webhook and applies its patch; true when the object changed. */
  private async call(c: {
    invocation: Invocation;
    attrs: AdmissionAttributes;
    versioned: Versioned;
    objects: Objects;
    index: number;
    round: number;
  }): Promise<boolean> {
    const { invocation, versioned } = c;
    const hook = invocation.hook;
    const name = hook.hook.name;
    const result = await callWebhook({
      invocation,
      attrs: c.attrs,
      versioned,
      mutating: true,
      log: this.deps.log,
    });
    if (result.patch === undefined) return false;
    let ops: unknown;
    try {
      ops = JSON.parse(result.patch);
    } catch (e) {
      throw internalError((e as Error).message);
    }
    if (!Array.isArray(ops)) throw internalError('json: cannot unmarshal object into Go value of type jsonpatch.Patch');
    if (ops.length === 0) return false;
    if (!versioned.object)
      throw internalError(
        `admission webhook "${name}" attempted to modify the object, which is not supported for this operation`,
      );
    if (result.patchType !== 'JSONPatch')
      throw new CallingWebhookError(
        name,
        `unsupported patch type "${result.patchType ?? ''}"`,
        rejectionStatus(name, result.status).code,
      );
    let patched: unknown;
    try {
      patched = applyJsonPatch(versioned.object, ops);
    } catch (e) {
      throw internalError((e as Error).message);
    }
    // As decoding the patched JSON into the type does: wrong types fail, unknown fields go.
    if (!isJsonObject(patched)) throw internalError('the patched object is not an object');
    const checked = checkSchema(patched, versioned.resource.schema);
    const [problem] = checked.errors;
    if (problem) throw internalError(fieldErrorMessage(problem));
    const next = checked.value as ApiObject;
    const changed = !deepEqual(versioned.object, next);
    c.attrs.annotations[`patch.webhook.${group('admission')}/round_${c.round}_index_${c.index}`] = JSON.stringify({
      configuration: hook.configurationName,
      webhook: name,
      patch: ops,
      patchType: 'JSONPatch',
    });
    c.objects.replace(versioned, next);
    return changed;
  }

  private annotateMutation(
    attrs: AdmissionAttributes,
    o: { hook: WebhookAccessor; index: number; round: number; changed: boolean },
  ): void {
    attrs.annotations[`mutation.webhook.${group('admission')}/round_${o.round}_index_${o.index}`] = JSON.stringify({
      configuration: o.hook.configurationName,
      webhook: o.hook.hook.name,
      mutated: o.changed,
    });
  }
}
