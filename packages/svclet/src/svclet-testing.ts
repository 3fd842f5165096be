// Test helpers (not built): a svclet in this process with a configuration file, a fake runtime
// and a fake pod side, and a signing CA with its key on disk.
import 'reflect-metadata';
import { webcrypto } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as x509 from '@peculiar/x509';
import YAML from 'yaml';
import { nodeAgentConfigType, type ApiObject } from '@svc/api';
import { silentLogger, type Logger } from '@svc/component-base';
import { freePort } from '@svc/testing';
import { parseSvcletOptions } from './options.js';
import type { ContainerLogFiles, PodSide, RuntimeStatusService } from './pod-source.js';
import { startSvclet, type RunningSvclet } from './svclet.js';

x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[1] & object);

/** A configuration file body for the current naming (fields as in the file). */
export function svcletConfigYaml(fields: Record<string, unknown>): string {
  return YAML.stringify({ ...nodeAgentConfigType(), ...fields });
}

/** A runtime whose Status answers ready or not as set (`down` makes the calls fail). */
export class FakeRuntime implements RuntimeStatusService {
  runtimeReady = true;
  networkReady = true;
  down = false;

  async version(): Promise<{ runtimeName: string; runtimeVersion: string }> {
    if (this.down) throw new Error('14 UNAVAILABLE: no connection established');
    return { runtimeName: 'fake-runtime', runtimeVersion: '1.0.0' };
  }

  async status(): Promise<{
    status: { conditions: Array<{ type: string; status: boolean; reason: string; message: string }> };
  }> {
    if (this.down) throw new Error('14 UNAVAILABLE: no connection established');
    return {
      status: {
        conditions: [
          {
            type: 'RuntimeReady',
            status: this.runtimeReady,
            reason: this.runtimeReady ? '' : 'RuntimeBroken',
            message: this.runtimeReady ? '' : 'broken on purpose',
          },
          {
            type: 'NetworkReady',
            status: this.networkReady,
            reason: this.networkReady ? '' : 'NetworkPluginNotReady',
            message: this.networkReady ? '' : 'no network on purpose',
          },
        ],
      },
    };
  }
}

/** A pod side that serves the given pods and log files. */
export class FakePods implements PodSide {
  podList: ApiObject[] = [];
  logs = new Map<string, ContainerLogFiles>();
  stopped = Promise.resolve();

  pods(): ApiObject[] {
    return this.podList;
  }

  containerLogFiles(namespace: string, pod: string, container: string): ContainerLogFiles | undefined {
    return this.logs.get(`${namespace}/${pod}/${container}`);
  }
}

export interface TestSvclet {
  svclet: RunningSvclet;
  dir: string;
  configFile: string;
  stop(): Promise<void>;
}

/**
 * A svclet in this process: `config` fields written to a file in a fresh directory (root and
 * cert dirs inside it, free ports for the API and healthz unless given), then `args`.
 */
export async function startTestSvclet(
  o: {
    config?: Record<string, unknown>;
    args?: string[];
    runtime?: RuntimeStatusService;
    pods?: PodSide;
    logger?: Logger;
    dir?: string;
  } = {},
): Promise<TestSvclet> {
  const dir = o.dir ?? (await mkdtemp(join(tmpdir(), 'svclet-')));
  const configFile = join(dir, 'config.yaml');
  await writeFile(
    configFile,
    svcletConfigYaml({
      address: '127.0.0.1',
      port: await freePort(),
      healthzPort: await freePort(),
      ...o.config,
    }),
  );
  const opts = parseSvcletOptions(
    ['--config', configFile, '--root-dir', join(dir, 'root'), '--cert-dir', join(dir, 'pki'), ...(o.args ?? [])],
    { quiet: true },
  );
  const pods = o.pods;
  const svclet = await startSvclet(opts, {
    logger: o.logger ?? silentLogger,
    runtime: o.runtime,
    startPods: pods ? async () => pods : undefined,
    csrPollMs: 100,
  });
  return {
    svclet,
    dir,
    configFile,
    stop: async () => {
      await svclet.shutdown();
      if (!o.dir) await rm(dir, { recursive: true, force: true });
    },
  };
}

/** A self-signed CA (ECDSA P-256) written as `<base>.crt` and `<base>.key` in `dir`. */
export async function writeSigningCa(
  dir: string,
  base: string,
): Promise<{ certFile: string; keyFile: string; certPem: string }> {
  const alg = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
  const keys = (await webcrypto.subtle.generateKey(alg, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: '01',
    name: `CN=${base}`,
    keys,
    signingAlgorithm: alg,
    notBefore: new Date(Date.now() - 60_000),
    notAfter: new Date(Date.now() + 24 * 3600_000),
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.digitalSignature, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  const der = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey));
  const keyPem = `-----BEGIN PRIVATE KEY-----\n${der.toString('base64').replace(/.{64}/g, '$&\n').replace(/\n?$/, '\n')}-----END PRIVATE KEY-----\n`;
  const certPem = `${cert.toString('pem')}\n`;
  const certFile = join(dir, `${base}.crt`);
  const keyFile = join(dir, `${base}.key`);
  await writeFile(certFile, certPem);
  await writeFile(keyFile, keyPem);
  return { certFile, keyFile, certPem };
}
