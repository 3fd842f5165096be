export * from './cri-types.js';
export {
  connectCri,
  criTarget,
  type CriClient,
  type RuntimeClient,
  type ImageClient,
  type CriCallOptions,
} from './cri-client.js';
export { CriError, criErrorCode, CRI_PROTO_PATH, CRI_LOADER_OPTIONS } from './cri-proto.js';
export { startRuntimeServer, type RuntimeServer, type RuntimeServerOptions } from './server.js';
export { parseRuntimeOptions, type RuntimeOptions } from './options.js';
export { RUNTIME_NAME, RUNTIME_VERSION, CRI_API_VERSION } from './process-runtime.js';
export { status as GrpcStatus } from '@grpc/grpc-js';
