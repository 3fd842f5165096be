export { startEtcd, type EtcdHandle, type StartEtcdOptions } from './etcd.js';
export { freePort, freePorts } from './free-port.js';
export { startTestApiServer, type TestApiServer, type TestApiServerOptions } from './api-server.js';
export { HttpsClient, type HttpResponse, type RequestOptions } from './https-client.js';
export { svcconfigYaml, type SvcconfigInput } from './svcconfig.js';
export { kubectl, type KubectlResult } from './kubectl.js';
export { waitFor } from './wait.js';
export { WatchStream, openWatch, type WatchEventJson } from './watch-stream.js';
export { startKubectlEnv, type KubectlEnv } from './kubectl-env.js';
