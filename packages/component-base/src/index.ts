export * from './user.js';
export * from './authenticator.js';
export { parseCertificateBundle, verifyClientChain, ClientCertAuthenticator, type ChainVerifyOptions } from './x509.js';
export {
  generateServingCert,
  ensureServingCert,
  createCertificateAuthority,
  issueCertificate,
  type ServingCert,
  type CertificateAuthority,
  type IssueOptions as CertificateOptions,
} from './self-signed.js';
export * from './health/checks.js';
export { healthHandler } from './health/handler.js';
export * from './flags.js';
export {
  TokenReviewAuthenticator,
  SubjectAccessReviewAuthorizer,
  type ReviewPoster,
  type PathAuthorizer,
  type PathAttributes,
  type Decision,
  type ResourceAttributes,
} from './delegated-auth.js';
export { startSecureServer, type SecureServer, type SecureServingOptions } from './secure-serving.js';
export * from './logger.js';
export { acceptUpgrades, isUpgrade, proxyUpgrade, takeUpgrade, type UpgradeProxyOptions } from './upgrade.js';
export { onDrainOrClose } from './join-streams.js';
export { STREAMING_PROTOCOLS } from '@svc/api';
export { ComponentMetrics, type ClientRequestObserver, type QueueObserver } from './client-metrics.js';
export * from './component-flags.js';
export {
  startDelegatedSecureServer,
  ComponentConfigError,
  type DelegatedServingDeps,
  type DelegationClient,
} from './delegated-serving.js';
export { componentMain } from './component-main.js';
export { runningComponent, type RunningComponent } from './running-component.js';
export {
  ComponentRegistry,
  CURRENT_RELEASE,
  UNEXPECTED_LABEL_VALUE,
  type ComponentRegistryOptions,
  type MetricsPolicy,
} from './metrics/component-registry.js';
export { withMetricsFlags, metricsPolicy, parseStringToString, previousRelease } from './metrics/metrics-flags.js';
export { METRIC_STABILITY, isHiddenIn, type StabilityLevel, type MetricStability } from './metrics/stability.js';
export { withFeatureFlags, featureOptions, type FeatureOptions } from './feature-flags.js';
export { listenBacklog } from './listen-backlog.js';
export { addAcceptHandles } from './accept-handles.js';
