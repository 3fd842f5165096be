export {
  loadSvcconfig,
  inClusterConfig,
  svcconfigPath,
  SvcconfigError,
  type ClientConfig,
  type ExecConfig,
} from './svcconfig.js';
export { ExecCredentialProvider, ExecCredentialError, type ExecCredentialStatus } from './exec-credential.js';
export {
  RestClient,
  type RequestOptions,
  type Response,
  type RestClientOptions,
  type Impersonation,
  type RequestMetrics,
} from './rest-client.js';
export { TokenBucket } from './token-bucket.js';
export { type StreamResponse, type TokenSource } from './rest-client.js';
export { watch, responseError, type WatchOptions } from './watch-stream.js';
export { type ClientLogger, silentClientLogger } from './logger.js';
export {
  Reflector,
  listWatcherFor,
  collectionPath,
  type ListerWatcher,
  type ListOptions,
  type GroupVersionResource,
  type CollectionOptions,
  type ReflectorSink,
  type ReflectorOptions,
} from './reflector.js';
export {
  Informer,
  Indexer,
  SharedInformerFactory,
  objectKey,
  splitKey,
  NAMESPACE_INDEX,
  type EventHandlers,
  type IndexFunc,
  type InformerOptions,
} from './informer.js';
export { WorkQueue, ExponentialFailureRateLimiter, type RateLimiter, type WorkQueueMetrics } from './work-queue.js';
export {
  LeaderElector,
  LeaderElectionConfigError,
  validateLeaderElectionConfig,
  type LeaderElectionConfig,
} from './leader-election.js';
export {
  runLeaderElected,
  componentClientConfig,
  type LeaderElectedOptions,
  type LeaderElectedRun,
  type LeaderElectionSettings,
} from './leader-elected.js';
export { EventRecorder, type EventOptions, type EventRecorderOptions } from './event-recorder.js';
export { Controller, type ControllerOptions, type Reconcile, type ReconcileResult } from './controller.js';
export {
  ResourceClient,
  type ResourceRef,
  type ObjectList,
  type PatchType,
  type WriteOptions,
  type PatchOptions,
  type DeleteOptions,
} from './resource-client.js';
export { ClientCodec, codecOf } from './codec.js';
export {
  discoverResource,
  discoverResources,
  waitForResource,
  findApiResource,
  apiResources,
  parseApiVersion,
  groupVersionPath,
  type ApiResource,
  type GroupVersion,
  type ResourceQuery,
} from './discovery.js';
export { dynamicResource, resourceFor, dynamicInformer, type DynamicInformerOptions } from './dynamic.js';
