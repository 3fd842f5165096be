import { connectCri } from '@svc/runtime/client';
import type { StartPodSide } from '../pod-source.js';
import { allocatable, machineCapacity } from '../host-info.js';
import { PodManager } from './pod-manager.js';

/**
 * The pod side as the svclet starts it: a `PodManager` over a CRI connection to
 * `containerRuntimeEndpoint`, fed from the configuration; the connection closes once the
 * manager stopped (at `ctx.signal`).
 */
export const startPodSide: StartPodSide = async (ctx) => {
  const c = ctx.config;
  const cri = connectCri(c.containerRuntimeEndpoint);
  const manager = new PodManager({
    client: ctx.client,
    cri,
    nodeName: ctx.nodeName,
    nodeIp: ctx.hostIps[0] ?? '127.0.0.1',
    rootDir: ctx.rootDir,
    volumeResyncPeriodMs: c.syncFrequency,
    clusterTrustBundleProjection: c.featureGates.ClusterTrustBundleProjection === true,
    podLogsDir: c.podLogsDir,
    staticPodPath: c.staticPodPath || undefined,
    fileCheckFrequencyMs: c.fileCheckFrequency,
    manifestUrl: c.staticPodURL || undefined,
    manifestUrlHeaders: c.staticPodURLHeader,
    httpCheckFrequencyMs: c.httpCheckFrequency,
    registeredNode: ctx.registeredNode,
    nodeAllocatable: allocatable(machineCapacity({ rootDir: ctx.rootDir, maxPods: c.maxPods }), c),
    logger: ctx.logger.with({ component: 'pods' }),
    metrics: ctx.metrics,
  });
  const stopped = manager.run(ctx.signal).finally(() => cri.close());
  return {
    pods: () => manager.pods(),
    containerLogFiles: (namespace, pod, container) => manager.containerLogFiles(namespace, pod, container),
    lastSyncLoop: () => manager.lastSyncLoop(),
    streamUrl: (r) => manager.streamUrl(r),
    containerUsage: () => manager.containerUsage(),
    stopped,
  };
};
