export { parseSvcletOptions, svcletCommand, SVCLET_VERSION, type SvcletOptions } from './options.js';
export {
  defaultConfiguration,
  loadConfigurationFile,
  ConfigurationError,
  DEFAULT_RUNTIME_ENDPOINT,
  type SvcletConfiguration,
} from './configuration.js';
export { SVCLET_GATES, parseGatePairs } from './feature-gates.js';
export { startSvclet, SvcletConfigError, type RunningSvclet, type SvcletDeps } from './svclet.js';
export { readCriLog, parseCriLine, type ReadLogOptions } from './container-logs.js';
export { nodeRequestAttributes } from './server.js';
export type {
  PodSource,
  PodSide,
  PodSideContext,
  StartPodSide,
  ContainerLogFiles,
  RuntimeStatusService,
  RuntimeCondition,
} from './pod-source.js';
export { startPodSide } from './pods/index.js';
