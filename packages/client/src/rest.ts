/**
 * The REST client alone — configuration, requests, credentials, discovery lists — without the
 * informers, the typed codec and the compiled-in catalog the package index brings in. A
 * command-line client imports this to keep its start-up short (`@svc/client/rest`).
 */
export { loadSvcconfig, svcconfigPath, type ClientConfig } from './svcconfig.js';
export { RestClient, type StreamResponse } from './rest-client.js';
export { ExecCredentialProvider } from './exec-credential.js';
export { responseError } from './watch-stream.js';
export { apiResources, type ApiResource } from './discovery.js';
