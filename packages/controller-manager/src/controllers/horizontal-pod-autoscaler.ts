import {
  isNotFound,
  type ApiObject,
  type HorizontalPodAutoscaler,
  type HorizontalPodAutoscalerBehavior,
  type HorizontalPodAutoscalerCondition,
  type MetricSpec,
  type MetricStatus,
  type MetricValueStatus,
  type Pod,
} from '@svc/api';
import { EventRecorder, ResourceClient, objectKey, responseError, type GroupVersionResource } from '@svc/client';
import { parseLabelSelector, quantityMilliValue, type LabelSelector } from '@svc/machinery';
import { informer, newController, type ControllerDefinition } from '../controller-context.js';
import { R } from '../resources.js';
import { REAL_CLOCK, type Clock } from './clock.js';
import { scaleMapper } from './disruption.js';
import { NodeResourceMetrics } from './hpa-metrics.js';
import { ScalingHistory } from './hpa-normalize.js';
import { rawResourceReplicas, resourceReplicas, type CalculatorSettings } from './hpa-replica-calculator.js';
import { nowTime } from './workload-util.js';

const NAME = 'horizontal-pod-autoscaler-controller';
const HPAS: GroupVersionResource = { group: 'autoscaling', version: 'v2', resource: 'horizontalpodautoscalers' };

interface Scale extends ApiObject {
  spec?: { replicas?: number };
  status?: { replicas?: number; selector?: string };
}

interface ScaleAccess {
  scale: Scale;
  update(s: Scale): Promise<Scale>;
}

/** The `--horizontal-pod-autoscaler-*` flags (durations in ms). */
export interface HpaFlags {
  syncPeriodMs: number;
  tolerance: number;
  downscaleStabilizationMs: number;
  cpuInitializationPeriodMs: number;
  initialReadinessDelayMs: number;
}

/** The flags' own defaults (Kubernetes 1.32's). */
const DEFAULT_FLAGS: HpaFlags = {
  syncPeriodMs: 15_000,
  tolerance: 0.1,
  downscaleStabilizationMs: 300_000,
  cpuInitializationPeriodMs: 300_000,
  initialReadinessDelayMs: 30_000,
};

const isHpaFlags = (v: unknown): v is HpaFlags =>
  typeof v === 'object' && v !== null && Object.keys(DEFAULT_FLAGS).every((k) => typeof Reflect.get(v, k) === 'number');

/** The parsed flags (options.ts `horizontalPodAutoscaler`), their defaults when the options carry none. */
function hpaFlags(options: object): HpaFlags {
  const given: unknown = Reflect.get(options, 'horizontalPodAutoscaler');
  return isHpaFlags(given) ? given : DEFAULT_FLAGS;
}

/** A failure that also sets a condition (Kubernetes returns both). */
class ConditionError extends Error {
  constructor(
    message: string,
    readonly condition: { type: string; status: 'True' | 'False'; reason: string; message: string },
  ) {
    super(message);
  }
}

/** Kubernetes' setConditionInList: the transition time moves only when the status changes. */
function setCondition(
  hpa: HorizontalPodAutoscaler,
  c: { type: string; status: 'True' | 'False'; reason: string; message: string },
): void {
  const st = (hpa.status ??= { desiredReplicas: 0 });
  const list = (st.conditions ??= []);
  let existing = list.find((x) => x.type === c.type);
  if (!existing) {
    existing = { type: c.type, status: 'Unknown' } as HorizontalPodAutoscalerCondition;
    list.push(existing);
  }
  if (existing.status !== c.status) existing.lastTransitionTime = nowTime();
  existing.status = c.status;
  existing.reason = c.reason;
  existing.message = c.message;
}

const milli = (v: number): string => (v % 1000 === 0 ? String(v / 1000) : `${v}m`);

/** The scaleDown window from the flag when the behavior leaves it unset (Kubernetes' maybeInitScaleDownStabilizationWindow). */
function withDefaultWindow(
  b: HorizontalPodAutoscalerBehavior | undefined,
  flagMs: number,
): HorizontalPodAutoscalerBehavior | undefined {
  if (!b?.scaleDown || b.scaleDown.stabilizationWindowSeconds !== undefined) return b;
  return { ...b, scaleDown: { ...b.scaleDown, stabilizationWindowSeconds: Math.trunc(flagMs / 1000) } };
}

/**
 * `horizontal-pod-autoscaler-controller`, as Kubernetes 1.32's podautoscaler: every
 * `--horizontal-pod-autoscaler-sync-period` each HPA's target is read through its `scale`
 * subresource, the selected pods' CPU or memory usage is read from their nodes'
 * `/metrics/resource` through `nodes/proxy` (hpa-metrics.ts: there is no metrics.k8s.io API),
 * the replica count computed (hpa-replica-calculator.ts), stabilized and limited
 * (hpa-normalize.ts), written to the scale and reported in the HPA's status with the
 * AbleToScale, ScalingActive and ScalingLimited conditions and Events. Pods, Object and
 * External metrics need a custom or external metrics API, which is not served: such a
 * metric is invalid (ScalingActive False).
 */
export function makeHorizontalPodAutoscalerController({
  clock = REAL_CLOCK,
}: { clock?: Clock } = {}): ControllerDefinition {
  return {
    name: NAME,
    build(ctx) {
      const flags = hpaFlags(ctx.options);
      const settings: CalculatorSettings = {
        tolerance: flags.tolerance,
        cpuInitializationPeriodMs: flags.cpuInitializationPeriodMs,
        initialReadinessDelayMs: flags.initialReadinessDelayMs,
      };
      const hpas = informer<HorizontalPodAutoscaler>(ctx, HPAS);
      const pods = informer<Pod>(ctx, R.pods());
      const log = ctx.logger.with({ controller: NAME });
      const events = new EventRecorder(ctx.client, { component: NAME, logger: log });
      const record = (
        hpa: HorizontalPodAutoscaler,
        e: { type: 'Normal' | 'Warning'; reason: string; message: string },
      ): void => events.event({ object: hpa, apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler', ...e });
      const mapping = scaleMapper(ctx.client);
      const history = new ScalingHistory(flags.downscaleStabilizationMs);
      const metricsSource = new NodeResourceMetrics(ctx.client, {
        now: () => clock.now(),
        sleep: (ms) => new Promise((r) => setTimeout(r, ms)),
      });

      /**
       * The target's `scale` subresource (autoscaling/v1 Scale) in JSON: the kind is found by
       * discovery (Kubernetes' REST mapper), and a Scale is not the target's own type, so it
       * is not read with the target's Protobuf codec.
       */
      async function scaleOf(hpa: HorizontalPodAutoscaler): Promise<ScaleAccess> {
        const ref = hpa.spec.scaleTargetRef;
        const apiVersion = ref.apiVersion ?? '';
        if (apiVersion.split('/').length > 2) throw new Error(`unexpected GroupVersion string: ${apiVersion}`);
        const { plural, scale } = await mapping(apiVersion || 'v1', ref.kind);
        const group = apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '';
        if (!scale) throw new Error(`${plural}${group ? `.${group}` : ''} does not implement the scale subresource`);
        const base = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion || 'v1'}`;
        const path = `${base}/namespaces/${hpa.metadata.namespace ?? ''}/${plural}/${encodeURIComponent(ref.name)}/scale`;
        const json = { accept: 'application/json', contentType: 'application/json' };
        const call = async (method: 'GET' | 'PUT', body?: Scale): Promise<Scale> => {
          const r = await ctx.client.request(method, path, { ...json, ...(body ? { body } : {}) });
          if (r.status < 200 || r.status > 299) throw responseError(r.status, r.body);
          return r.json<Scale>();
        };
        const current = await call('GET');
        return { scale: current, update: (s) => call('PUT', s) };
      }

      function selectorOf(hpa: HorizontalPodAutoscaler, scale: Scale): LabelSelector {
        const text = scale.status?.selector;
        if (!text) {
          record(hpa, { type: 'Warning', reason: 'SelectorRequired', message: 'selector is required' });
          throw new ConditionError('selector is required', {
            type: 'ScalingActive',
            status: 'False',
            reason: 'InvalidSelector',
            message: "the HPA target's scale is missing a selector",
          });
        }
        try {
          return parseLabelSelector(text);
        } catch (e) {
          const msg = `couldn't convert selector into a corresponding internal selector object: ${(e as Error).message}`;
          record(hpa, { type: 'Warning', reason: 'InvalidSelector', message: msg });
          throw new ConditionError(msg, {
            type: 'ScalingActive',
            status: 'False',
            reason: 'InvalidSelector',
            message: msg,
          });
        }
      }

      /** Kubernetes' computeStatusForResourceMetricGeneric for one Resource or ContainerResource metric. */
      async function resourceMetric(o: {
        spec: MetricSpec;
        currentReplicas: number;
        pods: Pod[];
        nowMs: number;
      }): Promise<{ replicas: number; name: string; status: MetricStatus }> {
        const container = o.spec.type === 'ContainerResource';
        const src = container ? o.spec.containerResource : o.spec.resource;
        const resource = src?.name ?? '';
        const target = src?.target;
        const where = { container: container ? o.spec.containerResource?.container : undefined };
        const query = async () => ({
          currentReplicas: o.currentReplicas,
          resource,
          container: where.container,
          pods: o.pods,
          nowMs: o.nowMs,
          metrics: await metricsSource
            .podMetrics({ pods: o.pods, resource, container: where.container })
            .catch((e: Error) => {
              throw new Error(`unable to get metrics for resource ${resource}: ${e.message}`);
            }),
        });
        let current: MetricValueStatus;
        let replicas: number;
        let name: string;
        if (target?.averageValue !== undefined) {
          const targetAverage = quantityMilliValue(String(target.averageValue));
          try {
            const r = rawResourceReplicas(await query(), { targetAverage, s: settings });
            replicas = r.replicas;
            current = { averageValue: milli(r.rawAverage) };
          } catch (e) {
            throw new Error(`failed to get ${resource} usage: ${(e as Error).message}`, { cause: e });
          }
          name = `${resource} resource`;
        } else if (target?.averageUtilization !== undefined) {
          try {
            const r = resourceReplicas(await query(), { targetUtilization: target.averageUtilization, s: settings });
            replicas = r.replicas;
            current = { averageUtilization: r.utilization, averageValue: milli(r.rawAverage) };
          } catch (e) {
            throw new Error(`failed to get ${resource} utilization: ${(e as Error).message}`, { cause: e });
          }
          name = `${resource}${container ? ' container' : ''} resource utilization (percentage of request)`;
        } else
          throw new Error(
            'invalid resource metric source: neither an average utilization target nor an average value (usage) target was set',
          );
        const status: MetricStatus = container
          ? {
              type: 'ContainerResource',
              containerResource: { name: resource, container: where.container ?? '', current },
            }
          : { type: 'Resource', resource: { name: resource, current } };
        return { replicas, name, status };
      }

      /** Kubernetes' computeReplicasForMetrics: the largest proposal of the valid metrics. */
      async function replicasForMetrics(hpa: HorizontalPodAutoscaler, scale: Scale, nowMs: number) {
        const selector = selectorOf(hpa, scale);
        const specs = hpa.spec.metrics ?? [];
        const ns = hpa.metadata.namespace ?? '';
        const selected = pods.store
          .list()
          .filter((p) => p.metadata.namespace === ns && selector.matches(p.metadata.labels ?? {}));
        const statuses: MetricStatus[] = [];
        let replicas = 0;
        let metric = '';
        let invalid = 0;
        let first: { error: Error; condition: ConditionError['condition'] } | undefined;
        for (const spec of specs) {
          try {
            if (spec.type !== 'Resource' && spec.type !== 'ContainerResource') {
              const kind = spec.type;
              throw new ConditionError(
                `unable to get ${kind.toLowerCase()} metric: no ${kind === 'External' ? 'external' : 'custom'} metrics API is served`,
                {
                  type: 'ScalingActive',
                  status: 'False',
                  reason: `FailedGet${kind}Metric`,
                  message: '',
                },
              );
            }
            const r = await resourceMetric({ spec, currentReplicas: scale.spec?.replicas ?? 0, pods: selected, nowMs });
            statuses.push(r.status);
            if (replicas === 0 || r.replicas > replicas) {
              replicas = r.replicas;
              metric = r.name;
            }
          } catch (e) {
            statuses.push({ type: spec.type } as MetricStatus);
            const reason =
              e instanceof ConditionError
                ? e.condition.reason
                : spec.type === 'ContainerResource'
                  ? 'FailedGetContainerResourceMetric'
                  : 'FailedGetResourceMetric';
            record(hpa, { type: 'Warning', reason: reason, message: (e as Error).message });
            if (invalid === 0)
              first = {
                error: e as Error,
                condition: {
                  type: 'ScalingActive',
                  status: 'False',
                  reason,
                  message: `the HPA was unable to compute the replica count: ${(e as Error).message}`,
                },
              };
            invalid++;
          }
        }
        const error = first
          ? new Error(
              `invalid metrics (${invalid} invalid out of ${specs.length}), first error is: ${first.error.message}`,
            )
          : undefined;
        if (first && (invalid >= specs.length || replicas < (scale.spec?.replicas ?? 0))) {
          setCondition(hpa, first.condition);
          return { replicas: -1, metric: '', statuses, error };
        }
        setCondition(hpa, {
          type: 'ScalingActive',
          status: 'True',
          reason: 'ValidMetricFound',
          message: `the HPA was able to successfully calculate a replica count from ${metric}`,
        });
        return { replicas, metric, statuses, error };
      }

      function setStatus(
        hpa: HorizontalPodAutoscaler,
        o: { current: number; desired: number; metrics?: MetricStatus[]; rescaled: boolean },
      ): void {
        const old = hpa.status ?? { desiredReplicas: 0 };
        hpa.status = {
          currentReplicas: o.current,
          desiredReplicas: o.desired,
          ...(o.rescaled
            ? { lastScaleTime: nowTime(clock.now()) }
            : old.lastScaleTime
              ? { lastScaleTime: old.lastScaleTime }
              : {}),
          ...(o.metrics?.length ? { currentMetrics: o.metrics } : {}),
          ...(old.conditions ? { conditions: old.conditions } : {}),
        };
      }

      async function writeStatus(hpa: HorizontalPodAutoscaler, original: string): Promise<void> {
        if (JSON.stringify(hpa.status ?? {}) === original) return;
        try {
          await new ResourceClient<HorizontalPodAutoscaler>(ctx.client, HPAS)
            .namespace(hpa.metadata.namespace ?? '')
            .update(hpa, { subresource: 'status' });
        } catch (e) {
          record(hpa, { type: 'Warning', reason: 'FailedUpdateStatus', message: (e as Error).message });
          throw e;
        }
      }

      /** Kubernetes' reconcileAutoscaler. */
      async function reconcile(shared: HorizontalPodAutoscaler, key: string): Promise<void> {
        const hpa = structuredClone(shared);
        const original = JSON.stringify(hpa.status ?? {});
        const ref = hpa.spec.scaleTargetRef;
        const reference = `${ref.kind}/${hpa.metadata.namespace ?? ''}/${ref.name}`;
        let access: ScaleAccess;
        try {
          access = await scaleOf(hpa);
        } catch (e) {
          const msg = (e as Error).message;
          record(hpa, { type: 'Warning', reason: 'FailedGetScale', message: msg });
          setCondition(hpa, {
            type: 'AbleToScale',
            status: 'False',
            reason: 'FailedGetScale',
            message: `the HPA controller was unable to get the target's current scale: ${msg}`,
          });
          await writeStatus(hpa, original);
          throw new Error(`failed to query scale subresource for ${reference}: ${msg}`, { cause: e });
        }
        const { scale } = access;
        setCondition(hpa, {
          type: 'AbleToScale',
          status: 'True',
          reason: 'SucceededGetScale',
          message: "the HPA controller was able to get the target's current scale",
        });
        const now = clock.now();
        const current = scale.spec?.replicas ?? 0;
        history.recordInitial(key, current, now);
        const min = hpa.spec.minReplicas ?? 1;
        const max = hpa.spec.maxReplicas;
        let desired = 0;
        let reason = '';
        let rescale = true;
        let statuses: MetricStatus[] | undefined;
        let failure: Error | undefined;
        if (current === 0 && min !== 0) {
          rescale = false;
          setCondition(hpa, {
            type: 'ScalingActive',
            status: 'False',
            reason: 'ScalingDisabled',
            message: 'scaling is disabled since the replica count of the target is zero',
          });
        } else if (current > max) {
          reason = 'Current number of replicas above Spec.MaxReplicas';
          desired = max;
        } else if (current < min) {
          reason = 'Current number of replicas below Spec.MinReplicas';
          desired = min;
        } else {
          let r: Awaited<ReturnType<typeof replicasForMetrics>>;
          try {
            r = await replicasForMetrics(hpa, scale, now);
          } catch (e) {
            if (!(e instanceof ConditionError)) throw e;
            setCondition(hpa, e.condition);
            r = { replicas: -1, metric: '', statuses: [], error: e };
          }
          statuses = r.statuses;
          if (r.replicas === -1) {
            setStatus(hpa, { current, desired: hpa.status?.desiredReplicas ?? 0, metrics: statuses, rescaled: false });
            await writeStatus(hpa, original);
            record(hpa, { type: 'Warning', reason: 'FailedComputeMetricsReplicas', message: r.error?.message ?? '' });
            throw new Error(
              `failed to compute desired number of replicas based on listed metrics for ${reference}: ${r.error?.message ?? ''}`,
            );
          }
          failure = r.error;
          let metric = '';
          if (r.replicas > desired) {
            desired = r.replicas;
            metric = r.metric;
          }
          if (desired > current) reason = `${metric} above target`;
          if (desired < current) reason = 'All metrics below target';
          const behavior = withDefaultWindow(hpa.spec.behavior, flags.downscaleStabilizationMs);
          const n = history.normalize({
            key,
            currentReplicas: current,
            desiredReplicas: desired,
            minReplicas: min,
            maxReplicas: max,
            behavior,
            nowMs: now,
          });
          setCondition(hpa, { type: 'AbleToScale', status: 'True', reason: n.ableReason, message: n.ableMessage });
          setCondition(hpa, {
            type: 'ScalingLimited',
            status: n.limited ? 'True' : 'False',
            reason: n.limitReason,
            message: n.limitMessage,
          });
          desired = n.replicas;
          rescale = desired !== current;
        }
        if (rescale) {
          try {
            await access.update({ ...scale, spec: { ...scale.spec, replicas: desired } });
          } catch (e) {
            const msg = (e as Error).message;
            record(hpa, {
              type: 'Warning',
              reason: 'FailedRescale',
              message: `New size: ${desired}; reason: ${reason}; error: ${msg}`,
            });
            setCondition(hpa, {
              type: 'AbleToScale',
              status: 'False',
              reason: 'FailedUpdateScale',
              message: `the HPA controller was unable to update the target scale: ${msg}`,
            });
            setStatus(hpa, { current, desired: hpa.status?.desiredReplicas ?? 0, metrics: statuses, rescaled: false });
            await writeStatus(hpa, original);
            throw new Error(`failed to rescale ${reference}: ${msg}`, { cause: e });
          }
          setCondition(hpa, {
            type: 'AbleToScale',
            status: 'True',
            reason: 'SucceededRescale',
            message: `the HPA controller was able to update the target scale to ${desired}`,
          });
          record(hpa, {
            type: 'Normal',
            reason: 'SuccessfulRescale',
            message: `New size: ${desired}; reason: ${reason}`,
          });
          history.storeScaleEvent({
            key,
            behavior: withDefaultWindow(hpa.spec.behavior, flags.downscaleStabilizationMs),
            from: current,
            to: desired,
            nowMs: now,
          });
          log.info('Successfully rescaled', { hpa: key, currentReplicas: current, desiredReplicas: desired, reason });
        } else desired = current;
        setStatus(hpa, { current, desired, metrics: statuses, rescaled: rescale });
        await writeStatus(hpa, original);
        if (failure) throw failure;
      }

      const controller = newController(ctx, {
        name: NAME,
        queueName: 'horizontalpodautoscaler',
        workers: ctx.options.concurrentSyncs['horizontal-pod-autoscaler'],
        reconcile: async (key) => {
          const hpa = hpas.store.get(key);
          if (!hpa) {
            history.forget(key);
            return;
          }
          try {
            await reconcile(hpa, key);
          } catch (e) {
            if (isNotFound(e)) return;
            log.warn('sync failed', { hpa: key, error: (e as Error).message });
          }
          const alive = new Set(pods.store.list().map((p) => objectKey(p)));
          metricsSource.retainPods(alive);
          // As Kubernetes: each HPA is processed once per sync period, whatever happened.
          return { requeueAfter: flags.syncPeriodMs };
        },
      });
      hpas.addEventHandler({
        onAdd: (o) => controller.enqueue(objectKey(o)),
        onUpdate: () => undefined,
        onDelete: (o) => controller.enqueue(objectKey(o)),
      });
      controller.watch(hpas, () => []);
      controller.watch(pods, () => []);
      return controller;
    },
  };
}

export const horizontalPodAutoscalerController = makeHorizontalPodAutoscalerController();
