import * as grpc from '@grpc/grpc-js';
import {
  kmsV2Service,
  type DecryptRequest,
  type DecryptResponse,
  type EncryptRequest,
  type EncryptResponse,
  type StatusResponse,
} from './proto.js';

/** The calls the API server makes to a KMS v2 plugin; each fails after the provider's timeout. */
export interface KmsV2Plugin {
  status(): Promise<StatusResponse>;
  encrypt(req: EncryptRequest): Promise<EncryptResponse>;
  decrypt(req: DecryptRequest): Promise<Buffer>;
  close(): void;
}

/**
 * A client of the plugin at `endpoint` (`unix:///path/to.sock`, or `unix:///@name` for a Linux
 * abstract socket). Nothing connects until the first call; a call waits for the connection
 * (a plugin may start after the API server) until its deadline, as Kubernetes' client does.
 */
export function connectKmsV2Plugin(o: { endpoint: string; timeoutMs: number }): KmsV2Plugin {
  const Service = kmsV2Service();
  const client = new Service(grpcTarget(o.endpoint), grpc.credentials.createInsecure(), {
    'grpc.default_authority': 'localhost',
  });
  const call = <Req, Res>(method: 'status' | 'encrypt' | 'decrypt', req: Req): Promise<Res> =>
    new Promise((resolve, reject) => {
      const md = new grpc.Metadata();
      md.setOptions({ waitForReady: true });
      const fn = (client as unknown as Record<string, UnaryMethod<Req, Res>>)[method] as UnaryMethod<Req, Res>;
      fn.call(client, req, md, { deadline: Date.now() + o.timeoutMs }, (err, res) =>
        err || res === undefined ? reject(err ?? new Error(`KMS ${method}: empty answer`)) : resolve(res),
      );
    });
  return {
    status: () => call<object, StatusResponse>('status', {}),
    encrypt: (req) => call<EncryptRequest, EncryptResponse>('encrypt', req),
    decrypt: async (req) => (await call<DecryptRequest, DecryptResponse>('decrypt', req)).plaintext,
    close: () => client.close(),
  };
}

/* eslint-disable max-params -- the shape of @grpc/grpc-js's generated unary client methods */
type UnaryMethod<Req, Res> = (
  req: Req,
  md: grpc.Metadata,
  opts: grpc.CallOptions,
  cb: (err: grpc.ServiceError | null, res?: Res) => void,
) => void;
/* eslint-enable max-params */

/** The socket path of a `unix://` endpoint (Kubernetes' reading: only the URL's path counts). */
export function kmsSocketPath(endpoint: string): string {
  let u: URL;
  try {
    u = new URL(endpoint);
  } catch (e) {
    throw new Error(`invalid endpoint for kms provider, error: ${(e as Error).message}`, { cause: e });
  }
  if (u.protocol !== 'unix:')
    throw new Error(
      `unsupported scheme ${JSON.stringify(u.protocol.slice(0, -1))} for KMS provider, only unix is supported`,
    );
  const path = decodeURIComponent(u.pathname);
  return path.startsWith('/@') ? path.slice(1) : path;
}

function grpcTarget(endpoint: string): string {
  const path = kmsSocketPath(endpoint);
  return path.startsWith('@') ? `unix-abstract:${path.slice(1)}` : `unix://${path}`;
}
