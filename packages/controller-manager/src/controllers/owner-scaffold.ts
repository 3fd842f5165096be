import type { ApiObject } from '@svc/api';
import { EventRecorder, ResourceClient, type EventOptions, type GroupVersionResource } from '@svc/client';
import type { Logger } from '@svc/component-base';
import { labelSelectorFromObject, type LabelSelector } from '@svc/machinery';
import type { ControllerContext } from '../controller-context.js';

/** An event about an owner object, as the workload controllers record them. */
export type OwnerEvent = Pick<EventOptions, 'type' | 'reason' | 'message'> & { action?: string };

/** What a workload controller builds before its loop: its logger and the events recorded on the objects it owns. */
export interface OwnerScaffold<T extends ApiObject> {
  log: Logger;
  record: (obj: T, e: OwnerEvent) => void;
}

/** The logger (`controller: <name>`) and an event recorder on objects of `apiVersion`/`kind`. */
export function ownerScaffold<T extends ApiObject>(
  ctx: ControllerContext,
  o: { name: string; apiVersion: string; kind: string },
): OwnerScaffold<T> {
  const log = ctx.logger.with({ controller: o.name });
  const events = new EventRecorder(ctx.client, { component: o.name, logger: log });
  return {
    log,
    record: (obj, e) => events.event({ object: obj, apiVersion: o.apiVersion, kind: o.kind, ...e }),
  };
}

/** A client of `resource` in one namespace, per call. */
export function namespacedApi<T extends ApiObject>(
  ctx: ControllerContext,
  resource: GroupVersionResource,
): (ns: string) => ResourceClient<T> {
  return (ns) => new ResourceClient<T>(ctx.client, resource).namespace(ns);
}

/**
 * The object's `spec.selector` as a selector, or undefined (logged) when it cannot be one: as
 * Kubernetes' workload controllers, an object with a bad selector is not synced.
 */
export function selectorOrSkip(
  selector: Parameters<typeof labelSelectorFromObject>[0],
  o: { log: Logger; key: string },
): LabelSelector | undefined {
  try {
    return labelSelectorFromObject(selector);
  } catch (e) {
    o.log.error('invalid selector, not syncing', { key: o.key, error: String(e) });
    return undefined;
  }
}
