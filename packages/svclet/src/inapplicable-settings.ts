import type { Logger } from '@svc/component-base';
import type { SvcletConfiguration } from './configuration.js';

/**
 * Settings of the spec's node agent table that this svclet accepts and validates but cannot
 * apply here, with why: containers are local processes of svc-runtime (no cgroups, images,
 * pod network or volumes). Reported once at start so none is silently ignored.
 */
const INAPPLICABLE: Array<{ fields: Array<keyof SvcletConfiguration>; why: string }> = [
  {
    fields: [
      'cgroupsPerQOS',
      'cgroupDriver',
      'cpuManagerPolicy',
      'cpuManagerReconcilePeriod',
      'cpuCFSQuota',
      'cpuCFSQuotaPeriod',
      'enforceNodeAllocatable',
      'localStorageCapacityIsolation',
      'failSwapOn',
      'maxOpenFiles',
    ],
    why: 'containers are local processes of svc-runtime: no cgroups, CPU manager, swap check or resource isolation',
  },
  {
    fields: ['hairpinMode', 'makeIPTablesUtilChains', 'clusterDNS', 'clusterDomain'],
    why: "containers share the node's network: no pod network, iptables or cluster DNS configuration",
  },
  {
    fields: [
      'imageGCHighThresholdPercent',
      'imageGCLowThresholdPercent',
      'containerLogMaxSize',
      'containerLogMaxFiles',
    ],
    why: 'svc-runtime pulls no images and keeps container logs itself: no image garbage collection or log rotation here',
  },
  { fields: ['enableControllerAttachDetach'], why: 'volumes are not attached or mounted by this svclet' },
  { fields: ['eventRecordQPS', 'eventBurst'], why: 'events are written without a rate limit' },
];

/** Logs, once, each group of settings that has no effect here, with their values. */
export function reportInapplicableSettings(config: SvcletConfiguration, logger: Logger): void {
  for (const group of INAPPLICABLE) {
    const values = Object.fromEntries(group.fields.map((f) => [f, JSON.stringify(config[f])]));
    logger.info(`settings with no effect on this platform: ${group.why}`, values);
  }
}
