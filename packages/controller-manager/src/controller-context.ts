import type { ApiObject } from '@svc/api';
import {
  Controller,
  WorkQueue,
  ExponentialFailureRateLimiter,
  type Reconcile,
  type RestClient,
  type SharedInformerFactory,
  type Informer,
  type GroupVersionResource,
} from '@svc/client';
import type { ComponentMetrics, Logger } from '@svc/component-base';
import type { ControllerManagerOptions } from './options.js';

/** What every controller is built with; informers come from one shared factory. */
export interface ControllerContext {
  client: RestClient;
  informers: SharedInformerFactory;
  options: ControllerManagerOptions;
  logger: Logger;
  metrics: ComponentMetrics;
}

/** A built controller: `run` works until `signal` fires. */
export interface RunnableController {
  run(signal: AbortSignal): Promise<void>;
}

/** One control loop the manager can run, under its canonical `--controllers` name. */
export interface ControllerDefinition {
  name: string;
  /**
   * Checks the controller's own configuration (files it reads) before the manager starts,
   * whether or not it leads; a throw stops start-up with a configuration error.
   */
  preflight?(options: ControllerManagerOptions): void | Promise<void>;
  /** Registers its informers and handlers on `ctx.informers`; they are started afterwards. */
  build(ctx: ControllerContext): RunnableController | Promise<RunnableController>;
}

/**
 * A `Controller` whose queue reports `workqueue_*` metrics under `queueName` and whose log
 * lines carry the controller name.
 */
export function newController(
  ctx: ControllerContext,
  o: { name: string; queueName?: string; reconcile: Reconcile; workers?: number },
): Controller {
  const queue = new WorkQueue<string>(
    new ExponentialFailureRateLimiter<string>(),
    ctx.metrics.queue(o.queueName ?? o.name),
  );
  return new Controller({
    name: o.name,
    reconcile: o.reconcile,
    workers: o.workers,
    queue,
    logger: ctx.logger.with({ controller: o.name }),
  });
}

/** The shared informer for a resource, typed. */
export function informer<T extends ApiObject>(
  ctx: ControllerContext,
  gvr: GroupVersionResource,
  namespace?: string,
): Informer<T> {
  return ctx.informers.informerFor<T>(gvr, namespace === undefined ? {} : { namespace });
}

/** Runs several controllers (or loops) together until `signal`; resolves when all stopped. */
export function runAll(parts: readonly RunnableController[]): RunnableController {
  return {
    run: async (signal) => {
      await Promise.all(parts.map((p) => p.run(signal)));
    },
  };
}
