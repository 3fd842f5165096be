export { loadSvcconfig, svcconfigPath, SvcconfigError, type ClientConfig, type ExecConfig } from './svcconfig.js';
export { ExecCredentialProvider, ExecCredentialError, type ExecCredentialStatus } from './exec-credential.js';
export { RestClient, type RequestOptions, type Response } from './rest-client.js';
