export { parseApiServerOptions, apiServerCommand, type ApiServerOptions } from './options.js';
export { startApiServer, type RunningApiServer } from './server/api-server.js';
export { createLogger, silentLogger, type Logger } from '@svc/component-base';
export * from './storage/index.js';
export { generateServingCert, ensureServingCert } from '@svc/component-base';
export { parseTokenFile } from './authn/token-file.js';
