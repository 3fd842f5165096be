export { startEtcd, type EtcdHandle, type StartEtcdOptions } from './etcd.js';
export { startRedis, type RedisHandle, type StartRedisOptions } from './redis.js';
export { closedPort, freePort, freePorts } from './free-port.js';
export { startTestApiServer, type TestApiServer, type TestApiServerOptions } from './api-server.js';
export {
  componentTestArgs,
  QUICK_LEADER_ELECTION,
  STEADY_LEADER_ELECTION,
  reportLostLease,
  type LeaderElectionPeriods,
} from './component-args.js';
/**
 * For people who write controllers: `startControlPlane({ crds: ['widget.yaml'] })` starts a
 * real etcd and API server in the test's process with the CRDs Established and served, and
 * hands back the URL, CA, admin token, svcconfig path and `@svc/client` clients; `stop()` in
 * `afterAll`. docs/testing-controllers.md has a whole operator test.
 */
export { startControlPlane, type ControlPlane, type ControlPlaneOptions } from './control-plane.js';
export { readCrdFiles, installCrds, crdClient, type CrdManifest } from './crds.js';
export { crdManifest, type CrdManifestInput, type CrdVersionInput } from './crd-manifest.js';
export {
  HttpsClient,
  type ClientCert,
  type ClientCredentials,
  type HttpResponse,
  type RequestOptions,
} from './https-client.js';
export { createTestCa, createTestCsr, type IssueOptions, type IssuedCert, type TestCa, type TestCsr } from './pki.js';
export { startOidcIssuer, type OidcAlg, type OidcIssuer, type OidcKey } from './oidc-issuer.js';
export { svcconfigYaml, type SvcconfigInput } from './svcconfig.js';
export { kubectl, type KubectlResult } from './kubectl.js';
export { waitFor, type WaitOptions } from './wait.js';
export { WatchStream, openWatch, type WatchEventJson, type WatchServer } from './watch-stream.js';
export { startKubectlEnv, type KubectlEnv, type KubectlRunOptions } from './kubectl-env.js';
export {
  uniqueName,
  expectCode,
  expectFailure,
  MEDIA,
  type ExpectedFailure,
  type Json,
  type StatusBody,
} from './api-assertions.js';
export { createNamespace } from './namespace.js';
export { createDefaultServiceAccount } from './service-account.js';
export { runCommand, type CommandResult } from './run-command.js';
export { spawnProcess, type TestProcess } from './test-process.js';
export { sharedTestdata, gatewayApiCrdDir } from './shared-testdata.js';
export { httpGetLocal, sha256Hex } from './http-get.js';
export { clusterScriptEnv } from './cluster-script-env.js';
