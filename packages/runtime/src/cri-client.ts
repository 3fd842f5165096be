import * as grpc from '@grpc/grpc-js';
import { criServices } from './cri-proto.js';
import type { ImageServiceApi, RuntimeServiceApi } from './cri-types.js';

export interface CriCallOptions {
  /** Fails the call with DEADLINE_EXCEEDED after this many milliseconds; none by default. */
  timeoutMs?: number;
}

type WithCallOptions<T> = {
  [K in keyof T]: T[K] extends (req: infer R) => infer P ? (req: R, opts?: CriCallOptions) => P : never;
};

export type RuntimeClient = WithCallOptions<RuntimeServiceApi>;
export type ImageClient = WithCallOptions<ImageServiceApi>;

export interface CriClient {
  runtime: RuntimeClient;
  image: ImageClient;
  close(): void;
}

/** Largest answer accepted (ExecSync may carry 16 MiB per stream). */
const MAX_RECEIVE = 64 * 1024 * 1024;

/**
 * A CRI client for `unix:///path` or a plain socket path. Methods are the RPCs in
 * lowerCamelCase; a failed call rejects with grpc-js's ServiceError (`code` is the gRPC
 * status, see `criErrorCode`). Nothing connects until the first call; a call while no
 * server listens fails with UNAVAILABLE instead of waiting.
 */
export function connectCri(endpoint: string): CriClient {
  const { RuntimeService, ImageService } = criServices();
  const target = criTarget(endpoint);
  const options = { 'grpc.max_receive_message_length': MAX_RECEIVE };
  const runtime = new RuntimeService(target, grpc.credentials.createInsecure(), options);
  const image = new ImageService(target, grpc.credentials.createInsecure(), options);
  return {
    runtime: promisify<RuntimeClient>(RuntimeService.service, runtime),
    image: promisify<ImageClient>(ImageService.service, image),
    close: () => {
      image.close();
      runtime.close();
    },
  };
}

/** The grpc-js target for a CRI endpoint: `unix:///p` as is, a path as `unix:<absolute path>`. */
export function criTarget(endpoint: string): string {
  if (endpoint.startsWith('unix://')) return endpoint;
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(endpoint))
    throw new Error(`unsupported CRI endpoint ${JSON.stringify(endpoint)}: only unix:// sockets`);
  if (!endpoint) throw new Error('empty CRI endpoint');
  return `unix://${endpoint.startsWith('/') ? '' : `${process.cwd()}/`}${endpoint}`;
}

/* eslint-disable max-params -- the shape of @grpc/grpc-js's generated unary client methods */
type UnaryMethod = (
  req: unknown,
  md: grpc.Metadata,
  opts: grpc.CallOptions,
  cb: (err: grpc.ServiceError | null, res?: unknown) => void,
) => void;
/* eslint-enable max-params */

function promisify<T>(def: grpc.ServiceDefinition, client: grpc.Client): T {
  const out: Record<string, (req: unknown, opts?: CriCallOptions) => Promise<unknown>> = {};
  for (const [name, method] of Object.entries(def)) {
    const key = method.originalName ?? name.charAt(0).toLowerCase() + name.slice(1);
    const call = (client as unknown as Record<string, UnaryMethod>)[name]!.bind(client);
    out[key] = (req, opts) =>
      new Promise((resolve, reject) => {
        const callOpts: grpc.CallOptions =
          opts?.timeoutMs !== undefined ? { deadline: Date.now() + opts.timeoutMs } : {};
        call(req ?? {}, new grpc.Metadata(), callOpts, (err, res) => (err ? reject(err) : resolve(res)));
      });
  }
  return out as T;
}
