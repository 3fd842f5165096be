import { lstatSync, mkdirSync, rmSync } from 'node:fs';
import { createConnection } from 'node:net';
import { dirname, resolve } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { silentLogger, type Logger } from '@svc/component-base';
import { CriError, criServices } from './cri-proto.js';
import { ImageStore } from './image-store.js';
import { RecordedImageService } from './image-service.js';
import { ProcessRuntime } from './process-runtime.js';
import { StreamServer } from './streaming/stream-server.js';

export interface RuntimeServerOptions {
  /** Unix socket path to serve on; a stale socket file is replaced, a live one is an error. */
  socket: string;
  /** Where state is kept (created if missing); a new server on the same directory takes over its containers. */
  rootDir: string;
  /** Every sandbox's IP (containers share the node's network). Default 127.0.0.1. */
  podIp?: string;
  logger?: Logger;
}

export interface RuntimeServer {
  socket: string;
  /** Stops serving and kills ExecSync commands in flight; containers keep running. */
  close(): Promise<void>;
}

const CLOSE_GRACE_MS = 5000;

/** Serves the CRI RuntimeService and ImageService (see process-runtime.ts, image-service.ts) on a unix socket. */
export async function startRuntimeServer(opts: RuntimeServerOptions): Promise<RuntimeServer> {
  const logger = opts.logger ?? silentLogger;
  const socket = resolve(opts.socket);
  const rootDir = resolve(opts.rootDir);
  mkdirSync(rootDir, { recursive: true });
  mkdirSync(dirname(socket), { recursive: true });
  await removeStaleSocket(socket);

  const images = new ImageStore(rootDir);
  const streams = await StreamServer.start({ host: '127.0.0.1', logger });
  const runtime = new ProcessRuntime(images, { rootDir, podIp: opts.podIp ?? '127.0.0.1', logger, streams });
  const { RuntimeService, ImageService } = criServices();
  const server = new grpc.Server();
  server.addService(RuntimeService.service, handlers(RuntimeService.service, runtime, logger));
  server.addService(
    ImageService.service,
    handlers(ImageService.service, new RecordedImageService(images, rootDir), logger),
  );
  await new Promise<void>((res, rej) => {
    server.bindAsync(`unix://${socket}`, grpc.ServerCredentials.createInsecure(), (err) => (err ? rej(err) : res()));
  });
  logger.info('serving CRI', { socket, rootDir });

  let closed: Promise<void> | undefined;
  return {
    socket,
    close: () => {
      closed ??= new Promise<void>((res) => {
        runtime.close();
        void streams.close();
        const force = setTimeout(() => server.forceShutdown(), CLOSE_GRACE_MS);
        server.tryShutdown(() => {
          clearTimeout(force);
          rmSync(socket, { force: true });
          res();
        });
      });
      return closed;
    },
  };
}

type Handler = (req: unknown) => Promise<unknown>;

/** One gRPC handler per RPC of `def`, calling the method of `impl` named as the RPC in lowerCamelCase. */
function handlers(def: grpc.ServiceDefinition, impl: object, logger: Logger): grpc.UntypedServiceImplementation {
  const out: grpc.UntypedServiceImplementation = {};
  for (const [name, method] of Object.entries(def)) {
    const key = method.originalName ?? name.charAt(0).toLowerCase() + name.slice(1);
    const fn = (impl as Record<string, unknown>)[key];
    if (typeof fn !== 'function') throw new Error(`no implementation of ${name}`);
    out[name] = (call: grpc.ServerUnaryCall<unknown, unknown>, callback: grpc.sendUnaryData<unknown>) => {
      void (fn as Handler).call(impl, call.request).then(
        (res) => callback(null, res),
        (err: unknown) => callback(toServiceError(name, err, logger)),
      );
    };
  }
  return out;
}

/** A `CriError` keeps its code and message; anything else is INTERNAL (and logged, as a bug). */
function toServiceError(rpc: string, err: unknown, logger: Logger): Partial<grpc.StatusObject> {
  if (err instanceof CriError) {
    logger.v(2).info('request refused', { rpc, code: grpc.status[err.code], message: err.message });
    return { code: err.code, details: err.message };
  }
  const message = err instanceof Error ? err.message : String(err);
  logger.error('request failed', { rpc, error: message });
  return { code: grpc.status.INTERNAL, details: message };
}

async function removeStaleSocket(path: string): Promise<void> {
  let isSocket: boolean;
  try {
    isSocket = lstatSync(path).isSocket();
  } catch {
    return;
  }
  if (!isSocket) throw new Error(`${path} exists and is not a socket`);
  const live = await new Promise<boolean>((res) => {
    const conn = createConnection(path);
    conn.once('connect', () => {
      conn.destroy();
      res(true);
    });
    conn.once('error', () => res(false));
  });
  if (live) throw new Error(`${path} is served by another process`);
  rmSync(path, { force: true });
}
