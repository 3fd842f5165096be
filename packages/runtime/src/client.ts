// `@svc/runtime/client`: what a CRI client needs (the node agent), without the runtime's
// server, process runtime and streaming stack, which its entry point `@svc/runtime` also
// loads (~0.5 s of module loading at a svclet's start).
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
