import type { ApiObject } from '@svc/api';
import type { RestClient } from './rest-client.js';
import { ResourceClient, type ResourceRef } from './resource-client.js';
import { Informer, type InformerOptions } from './informer.js';
import { listWatcherFor, type CollectionOptions } from './reflector.js';
import { discoverResource, type ResourceQuery } from './discovery.js';

/**
 * A `ResourceClient` for any resource, compiled in or not (a custom resource), typed by the
 * `T` the caller supplies: nothing checks that the server's objects have that shape.
 * Custom resources always travel as JSON, whatever the client's content type.
 */
export function dynamicResource<T extends ApiObject = ApiObject>(
  client: RestClient,
  ref: ResourceRef,
): ResourceClient<T> {
  return new ResourceClient<T>(client, ref);
}

/**
 * Resolves a kind (or resource name) through the server's discovery (`/apis/<g>/<v>`) and
 * returns its `ResourceClient`, which knows the resource's scope. Throws NotFound when the
 * server does not serve it (see `waitForResource` for a CRD that was just created).
 */
export async function resourceFor<T extends ApiObject = ApiObject>(
  client: RestClient,
  q: ResourceQuery,
  o: { signal?: AbortSignal } = {},
): Promise<ResourceClient<T>> {
  return dynamicResource<T>(client, await discoverResource(client, q, o));
}

export interface DynamicInformerOptions<T extends ApiObject> extends InformerOptions<T>, CollectionOptions {}

/**
 * An informer on any resource: lists (paged), then watches from the list's resourceVersion,
 * relisting on 410 Gone (see `Reflector`). One namespace, or all when `namespace` is unset.
 * To share one watch among several users, use `SharedInformerFactory.informerFor(ref)`.
 */
export function dynamicInformer<T extends ApiObject = ApiObject>(
  client: RestClient,
  ref: ResourceRef,
  o: DynamicInformerOptions<T> = {},
): Informer<T> {
  if (o.namespace !== undefined && ref.namespaced === false) {
    throw new Error(`${ref.resource} is cluster-scoped: an informer on it takes no namespace`);
  }
  const { namespace, labelSelector, fieldSelector, ...informerOptions } = o;
  return new Informer<T>(listWatcherFor<T>(client, ref, { namespace, labelSelector, fieldSelector }), informerOptions);
}
