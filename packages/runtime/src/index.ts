export * from './client.js';
export { startRuntimeServer, type RuntimeServer, type RuntimeServerOptions } from './server.js';
export { parseRuntimeOptions, type RuntimeOptions } from './options.js';
export { RUNTIME_NAME, RUNTIME_VERSION, CRI_API_VERSION } from './process-runtime.js';
export { status as GrpcStatus } from '@grpc/grpc-js';
