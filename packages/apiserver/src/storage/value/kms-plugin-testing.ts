import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import type { KmsV2Plugin } from './kms-v2/plugin-client.js';
import {
  kmsV2Service,
  type DecryptRequest,
  type EncryptRequest,
  type EncryptResponse,
  type StatusResponse,
} from './kms-v2/proto.js';

/**
 * A KMS v2 plugin for tests: a key-encryption key per key ID (AES-GCM), the current key ID
 * and health settable, and a count of Encrypt/Decrypt calls. `plugin` answers in-process;
 * `serve()` answers the real gRPC API on a unix socket.
 */
export class FakeKms {
  keyId = 'key-1';
  healthz = 'ok';
  /** Calls to fail with this message (UNAVAILABLE). */
  failing?: string;
  encrypts = 0;
  decrypts = 0;
  private readonly keks = new Map<string, Buffer>();

  status(): StatusResponse {
    if (this.failing) throw new Error(this.failing);
    return { version: 'v2', healthz: this.healthz, keyId: this.keyId };
  }

  encrypt(req: EncryptRequest): EncryptResponse {
    if (this.failing) throw new Error(this.failing);
    this.encrypts++;
    const iv = randomBytes(12);
    const c = createCipheriv('aes-256-gcm', this.kek(this.keyId), iv);
    const ct = Buffer.concat([iv, c.update(req.plaintext), c.final(), c.getAuthTag()]);
    return { ciphertext: ct, keyId: this.keyId, annotations: { 'fake.kms.example.com': Buffer.from('1') } };
  }

  decrypt(req: DecryptRequest): Buffer {
    if (this.failing) throw new Error(this.failing);
    this.decrypts++;
    const d = createDecipheriv('aes-256-gcm', this.kek(req.keyId), req.ciphertext.subarray(0, 12));
    d.setAuthTag(req.ciphertext.subarray(req.ciphertext.length - 16));
    return Buffer.concat([d.update(req.ciphertext.subarray(12, req.ciphertext.length - 16)), d.final()]);
  }

  /** The in-process client. */
  get plugin(): KmsV2Plugin {
    return {
      status: async () => this.status(),
      encrypt: async (r) => this.encrypt(r),
      decrypt: async (r) => this.decrypt(r),
      close: () => undefined,
    };
  }

  /** Serves the gRPC API on a fresh unix socket; resolves with its `unix://` endpoint and the stop. */
  async serve(): Promise<{ endpoint: string; stop: () => Promise<void> }> {
    const server = new grpc.Server();
    const unary =
      <Req, Res>(f: (req: Req) => Res): grpc.handleUnaryCall<Req, Res> =>
      (call, cb) => {
        try {
          cb(null, f(call.request));
        } catch (e) {
          cb({ code: grpc.status.UNAVAILABLE, details: (e as Error).message }, null);
        }
      };
    server.addService(kmsV2Service().service, {
      status: unary(() => this.status()),
      encrypt: unary((r: EncryptRequest) => this.encrypt(r)),
      decrypt: unary((r: DecryptRequest) => ({ plaintext: this.decrypt(r) })),
    });
    const socket = join(mkdtempSync(join(tmpdir(), 'svc-kms-')), 'kms.sock');
    await new Promise<void>((resolve, reject) =>
      server.bindAsync(`unix://${socket}`, grpc.ServerCredentials.createInsecure(), (err) =>
        err ? reject(err) : resolve(),
      ),
    );
    return {
      endpoint: `unix://${socket}`,
      stop: () => new Promise<void>((resolve) => server.tryShutdown(() => resolve())),
    };
  }

  private kek(keyId: string): Buffer {
    let k = this.keks.get(keyId);
    if (!k) {
      k = createHash('sha256').update(`fake-kms:${keyId}`).digest();
      this.keks.set(keyId, k);
    }
    return k;
  }
}
