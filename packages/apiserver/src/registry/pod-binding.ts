import {
  badRequest,
  bindingKind,
  conflict,
  fieldErrors,
  invalid,
  successStatus,
  type ApiObject,
  type FieldError,
  type PodCondition,
  type ResourceType,
} from '@svc/api';
import { endpointKey, type CreateOnlyHandler, type CreateOnlyRequest } from './create-only.js';
import { nowRfc3339, type GenericStore } from './store.js';

interface Binding extends ApiObject {
  target?: { kind?: string; name?: string };
}

/** Kubernetes' ValidatePodBinding: the target is a Node (or has no kind) and has a name. */
function validateBinding(b: Binding): FieldError[] {
  const errs: FieldError[] = [];
  const kind = b.target?.kind ?? '';
  if (kind !== '' && kind !== 'Node') errs.push(fieldErrors.notSupported('target.kind', kind, ['Node', '<empty>']));
  if (!b.target?.name) errs.push(fieldErrors.required('target.name', ''));
  return errs;
}

/**
 * Kubernetes' UpdatePodCondition: replaces the condition of the same type (the transition time
 * moves only when the status changes) or appends it.
 */
export function setPodCondition(status: { conditions?: PodCondition[] }, c: PodCondition, now: string): void {
  const list = status.conditions ?? [];
  const i = list.findIndex((x) => x.type === c.type);
  const old = i >= 0 ? list[i] : undefined;
  const next = { ...c, lastTransitionTime: old && old.status === c.status ? old.lastTransitionTime : now };
  if (i >= 0) list[i] = next;
  else list.push(next);
  status.conditions = list;
}

/**
 * Assigns the pod `name` to the binding's node, as Kubernetes' BindingREST: one optimistic
 * update that sets `spec.nodeName`, merges the binding's annotations and sets PodScheduled
 * to True. A pod already bound, being deleted or still gated is a 409 on `pods/binding`; the
 * binding's uid and resourceVersion, when given, are preconditions. Answers a success Status.
 */
async function bindPod(pods: GenericStore, req: CreateOnlyRequest, name: string): Promise<object> {
  const b = req.body as Binding;
  if (b.metadata.namespace && b.metadata.namespace !== req.namespace) {
    throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
  }
  const errs = validateBinding(b);
  if (errs.length > 0) throw invalid({ group: '', kind: 'Binding' }, name, errs);
  const node = b.target?.name ?? '';
  const refused = (why: string): never => {
    throw conflict({ group: '', resource: 'pods/binding' }, name, why);
  };
  await pods.update(req.namespace, name, {
    updater: (pod) => {
      const spec = (pod.spec ?? {}) as { nodeName?: string; schedulingGates?: unknown[] };
      if (b.metadata.uid && b.metadata.uid !== pod.metadata.uid) {
        refused(
          `Precondition failed: UID in precondition: ${b.metadata.uid}, UID in object meta: ${pod.metadata.uid ?? ''}`,
        );
      }
      if (b.metadata.resourceVersion) pod.metadata.resourceVersion = b.metadata.resourceVersion;
      if (pod.metadata.deletionTimestamp) refused(`pod ${name} is being deleted, cannot be assigned to a host`);
      if (spec.nodeName) refused(`pod ${name} is already assigned to node "${spec.nodeName}"`);
      if ((spec.schedulingGates ?? []).length > 0) refused(`pod ${name} has non-empty .spec.schedulingGates`);
      spec.nodeName = node;
      pod.spec = spec;
      if (b.metadata.annotations) pod.metadata.annotations = { ...pod.metadata.annotations, ...b.metadata.annotations };
      const status = (pod.status ?? {}) as { conditions?: PodCondition[] };
      setPodCondition(status, { type: 'PodScheduled', status: 'True', lastProbeTime: null }, nowRfc3339());
      pod.status = status;
      return pod;
    },
    ctx: { user: req.user, dryRun: req.dryRun },
    subresource: 'binding',
    managedFieldsDone: true,
  });
  return { ...successStatus(), code: 201 };
}

/**
 * The create-only endpoints that bind pods: `pods/<name>/binding` (the pod named by the URL;
 * a different `metadata.name` in the body is a 400) and the `bindings` collection (the pod
 * named by the body), keyed by `endpointKey`.
 */
export function podBindingHandlers(o: {
  pod: ResourceType;
  binding?: ResourceType;
  pods: () => GenericStore;
}): Array<[string, CreateOnlyHandler]> {
  const kind = bindingKind();
  const out: Array<[string, CreateOnlyHandler]> = [
    [
      endpointKey(o.pod, 'binding'),
      {
        kind,
        create: (req) => {
          const given = req.body.metadata.name;
          if (given && given !== req.name) throw badRequest('name in URL does not match name in Binding object');
          return bindPod(o.pods(), req, req.name);
        },
      },
    ],
  ];
  if (o.binding) {
    out.push([
      endpointKey(o.binding),
      {
        kind,
        create: (req) => {
          const name = req.body.metadata.name ?? '';
          if (!name)
            throw invalid({ group: '', kind: 'Binding' }, '', [
              fieldErrors.required('metadata.name', 'name or generateName is required'),
            ]);
          return bindPod(o.pods(), req, name);
        },
      },
    ]);
  }
  return out;
}
