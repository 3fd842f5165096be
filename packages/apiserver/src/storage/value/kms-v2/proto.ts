import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import protobuf from 'protobufjs';

/**
 * proto/kms-v2.proto of this package, found from the nearest package.json above this module:
 * the same from src/ (tests), dist/ and the bundle in dist/bundle/.
 */
export const KMS_V2_PROTO_PATH = join(packageDir(fileURLToPath(import.meta.url)), 'proto', 'kms-v2.proto');

function packageDir(file: string): string {
  for (let dir = dirname(file); ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir) throw new Error(`no package.json above ${file}`);
  }
}

/** How both ends of the plugin API decode messages: camelCase fields, bytes as Buffers. */
const LOADER_OPTIONS: protoLoader.Options = { keepCase: false, longs: Number, enums: String, defaults: true };

export interface StatusResponse {
  version: string;
  healthz: string;
  keyId: string;
}
export interface EncryptRequest {
  plaintext: Buffer;
  uid: string;
}
export interface EncryptResponse {
  ciphertext: Buffer;
  keyId: string;
  annotations: Record<string, Buffer>;
}
export interface DecryptRequest {
  ciphertext: Buffer;
  uid: string;
  keyId: string;
  annotations: Record<string, Buffer>;
}
export interface DecryptResponse {
  plaintext: Buffer;
}

export const DEK_SOURCE_AES_GCM_KEY = 0;
export const DEK_SOURCE_HKDF_SEED = 1;

/** The stored envelope of a KMS v2 value. */
export interface EncryptedObject {
  encryptedData: Buffer;
  keyID: string;
  encryptedDEKSource: Buffer;
  annotations: Record<string, Buffer>;
  /** `DEK_SOURCE_AES_GCM_KEY` or `DEK_SOURCE_HKDF_SEED`. */
  encryptedDEKSourceType: number;
}

let service: grpc.ServiceClientConstructor | undefined;

/** The `v2.KeyManagementService` client constructor (and `.service`, its definition for servers), loaded once. */
export function kmsV2Service(): grpc.ServiceClientConstructor {
  if (!service) {
    const pkg = grpc.loadPackageDefinition(protoLoader.loadSync(KMS_V2_PROTO_PATH, LOADER_OPTIONS));
    service = (pkg.v2 as grpc.GrpcObject).KeyManagementService as grpc.ServiceClientConstructor;
  }
  return service;
}

let envelope: protobuf.Type | undefined;

function envelopeType(): protobuf.Type {
  envelope ??= protobuf.loadSync(KMS_V2_PROTO_PATH).lookupType('v2.EncryptedObject');
  return envelope;
}

export function encodeEncryptedObject(o: EncryptedObject): Buffer {
  const t = envelopeType();
  return Buffer.from(t.encode(t.fromObject(o)).finish());
}

/** Throws when `data` is not a protobuf EncryptedObject. */
export function decodeEncryptedObject(data: Buffer): EncryptedObject {
  const t = envelopeType();
  const o = t.toObject(t.decode(data), { defaults: true, enums: Number, bytes: Buffer }) as EncryptedObject;
  return o;
}
