import { isInvalid, isNotFound, type ApiObject, type OwnerReference } from '@svc/api';
import type { ResourceClient } from '@svc/client';
import type { LabelSelector } from '@svc/machinery';

/** The owner reference with `controller: true`, if any (Kubernetes' GetControllerOf). */
export function controllerOf(o: ApiObject): OwnerReference | undefined {
  return o.metadata.ownerReferences?.find((r) => r.controller === true);
}

/** An owner reference making `owner` the controller of a dependent (controller and blockOwnerDeletion set, as Kubernetes' NewControllerRef). */
export function newControllerRef(owner: ApiObject, apiVersion: string, kind: string): OwnerReference {
  return {
    apiVersion,
    kind,
    name: owner.metadata.name ?? '',
    uid: owner.metadata.uid ?? '',
    controller: true,
    blockOwnerDeletion: true,
  };
}

/**
 * The object `ref` names, looked up with `get` (a cache), if it is of `group`/`kind` and still
 * has the referenced UID (Kubernetes' resolveControllerRef).
 */
export function resolveControllerRef<T extends ApiObject>(
  ref: OwnerReference | undefined,
  { group, kind }: { group: string; kind: string },
  get: (name: string) => T | undefined,
): T | undefined {
  if (!ref || ref.kind !== kind) return undefined;
  // `v1` is the core group (''); `apps/v1` is `apps`.
  const refGroup = ref.apiVersion.includes('/') ? ref.apiVersion.split('/')[0] : '';
  if (refGroup !== group) return undefined;
  const o = get(ref.name);
  return o && o.metadata.uid === ref.uid ? o : undefined;
}

export interface ClaimOptions<T extends ApiObject> {
  /** The controller claiming: its owner reference goes on adopted objects. */
  owner: ApiObject;
  ownerRef: OwnerReference;
  selector: LabelSelector;
  /** Candidates (cached, frozen; never mutated). */
  objects: readonly T[];
  /** Writes the dependents, in the owner's namespace. */
  client: ResourceClient<T>;
  /**
   * Throws unless the owner may adopt (Kubernetes rechecks with a live read that it still
   * exists with the same UID and is not being deleted); called at most once, before the first adoption.
   */
  canAdopt(): Promise<void>;
}

/**
 * Kubernetes' ControllerRefManager: keeps the objects the owner controls that match its
 * selector, adopts matching orphans (strategic-merge patch adding the controller reference),
 * releases owned objects that stopped matching (patch deleting the reference) unless the
 * owner is being deleted, and leaves objects controlled by others alone. Answers the
 * claimed objects; failures to adopt or release are thrown after every object was tried.
 */
export async function claimObjects<T extends ApiObject>(o: ClaimOptions<T>): Promise<T[]> {
  const ownerUid = o.owner.metadata.uid;
  const ownerDeleting = !!o.owner.metadata.deletionTimestamp;
  let adoptable: Promise<void> | undefined;
  const claimed: T[] = [];
  const errors: unknown[] = [];
  for (const obj of o.objects) {
    const ref = controllerOf(obj);
    const matches = o.selector.matches(obj.metadata.labels);
    const uid = obj.metadata.uid;
    const name = obj.metadata.name ?? '';
    try {
      if (ref) {
        if (ref.uid !== ownerUid) continue;
        if (matches) claimed.push(obj);
        else if (!ownerDeleting) {
          await o.client.patch(
            name,
            {
              metadata: { ownerReferences: [{ $patch: 'delete', uid: ownerUid }], uid },
            },
            { type: 'strategic' },
          );
        }
        continue;
      }
      if (
        ownerDeleting ||
        !matches ||
        obj.metadata.deletionTimestamp ||
        obj.metadata.namespace !== o.owner.metadata.namespace
      )
        continue;
      adoptable ??= o.canAdopt();
      await adoptable;
      claimed.push(
        await o.client.patch(name, { metadata: { ownerReferences: [o.ownerRef], uid } }, { type: 'strategic' }),
      );
    } catch (e) {
      // A dependent that is gone is neither claimed nor an error; one that cannot be released any more (Invalid) neither.
      if (isNotFound(e) || (ref && isInvalid(e))) continue;
      errors.push(e);
    }
  }
  if (errors.length > 0) throw errors[0];
  return claimed;
}

/**
 * A `canAdopt` for `claimObjects`: reads the owner live (uncached) and throws when it is
 * gone, was replaced (another UID), or is being deleted.
 */
export function recheckOwner(owner: ApiObject, getLive: () => Promise<ApiObject>): () => Promise<void> {
  return async () => {
    const fresh = await getLive();
    const what = `${owner.kind ?? 'owner'} ${owner.metadata.namespace ?? ''}/${owner.metadata.name ?? ''}`;
    if (fresh.metadata.uid !== owner.metadata.uid)
      throw new Error(
        `original ${what} is gone: got uid ${fresh.metadata.uid ?? ''}, wanted ${owner.metadata.uid ?? ''}`,
      );
    if (fresh.metadata.deletionTimestamp)
      throw new Error(`${what} has just been deleted at ${fresh.metadata.deletionTimestamp}`);
  };
}
