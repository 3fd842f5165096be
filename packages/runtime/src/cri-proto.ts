import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';

/** proto/api.proto of this package; the same relative path from src/ (tests) and dist/. */
export const CRI_PROTO_PATH = fileURLToPath(new URL('../proto/api.proto', import.meta.url));

/** How both ends decode CRI messages; see cri-types.ts for the resulting shapes. */
export const CRI_LOADER_OPTIONS: protoLoader.Options = {
  keepCase: false,
  longs: Number,
  enums: String,
  defaults: true,
  oneofs: true,
};

export interface CriServices {
  RuntimeService: grpc.ServiceClientConstructor;
  ImageService: grpc.ServiceClientConstructor;
}

let loaded: CriServices | undefined;

/** The `runtime.v1` services, loaded once per process. */
export function criServices(): CriServices {
  if (!loaded) {
    const pkg = grpc.loadPackageDefinition(protoLoader.loadSync(CRI_PROTO_PATH, CRI_LOADER_OPTIONS));
    const v1 = (pkg.runtime as grpc.GrpcObject).v1 as grpc.GrpcObject;
    loaded = {
      RuntimeService: v1.RuntimeService as grpc.ServiceClientConstructor,
      ImageService: v1.ImageService as grpc.ServiceClientConstructor,
    };
  }
  return loaded;
}

/** An error carrying a gRPC status code; the server answers with exactly that code and message. */
export class CriError extends Error {
  constructor(
    readonly code: grpc.status,
    message: string,
  ) {
    super(message);
    this.name = 'CriError';
  }
}

export const notFound = (what: string): CriError => new CriError(grpc.status.NOT_FOUND, `${what} not found`);
export const invalidArgument = (msg: string): CriError => new CriError(grpc.status.INVALID_ARGUMENT, msg);
export const failedPrecondition = (msg: string): CriError => new CriError(grpc.status.FAILED_PRECONDITION, msg);

/** The gRPC status code of an error from a CRI call (client side) or a `CriError`; undefined for anything else. */
export function criErrorCode(err: unknown): grpc.status | undefined {
  if (err instanceof CriError) return err.code;
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'number' ? code : undefined;
}
