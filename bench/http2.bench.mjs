// HTTP/2 against HTTP/1.1 on the same server, same run (issue 18).
//
//  1. figure:  ConfigMap creates (1 KiB of data) over HTTP/2, 64 streams in flight on one
//              connection (as client-go multiplexes)
//     ceiling: the same over HTTP/1.1, 64 keep-alive connections
//  2. figure:  GETs of one ConfigMap over HTTP/2, 64 in flight on one connection
//     ceiling: the same over HTTP/1.1, 64 keep-alive connections
//
// The ratio is HTTP/2's rate over HTTP/1.1's. The server runs with
// --http2-max-streams-per-connection=64 so that the 64 streams fit one connection (its default
// is Kubernetes' 100). Everything runs on one machine (etcd, server, load generator).

import { connect } from 'node:http2';
import { randomBytes } from 'node:crypto';
import {
  Scope,
  apiClient,
  fmtLatency,
  mustNotFail,
  result,
  runIfMain,
  runLoad,
  spawnApiServer,
  startEtcdInScope,
} from './lib.mjs';

const IN_FLIGHT = 64;
const WARMUP_MS = 1000;
const MEASURE_MS = 5000;
const PAYLOAD = randomBytes(768).toString('base64');
const PATH = '/api/v1/namespaces/default/configmaps';

/** An HTTP/2 client on one session: `call(method, path, body?)` → {status, body}. */
function h2Client(server) {
  const session = connect(server.url, { ca: server.caPem });
  session.on('error', () => undefined);
  const call = (method, path, body) =>
    new Promise((res, rej) => {
      const headers = {
        ':method': method,
        ':path': path,
        authorization: `Bearer ${server.token}`,
        accept: 'application/json',
      };
      if (body !== undefined) headers['content-type'] = 'application/json';
      const s = session.request(headers);
      let status = 0;
      const chunks = [];
      s.on('response', (h) => (status = Number(h[':status'])));
      s.on('data', (c) => chunks.push(c));
      s.on('end', () => res({ status, body: Buffer.concat(chunks).toString('utf8') }));
      s.on('error', rej);
      s.end(body === undefined ? undefined : JSON.stringify(body));
    });
  return { call, close: () => session.close() };
}

function creates(client, prefix) {
  return async (i) => {
    const r = await client.call('POST', PATH, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: `${prefix}-${i}` },
      data: { payload: PAYLOAD },
    });
    if (r.status !== 201) throw new Error(`POST ${PATH}: HTTP ${r.status} ${r.body.slice(0, 300)}`);
  };
}

function gets(client) {
  return async () => {
    const r = await client.call('GET', `${PATH}/bench-get`);
    if (r.status !== 200) throw new Error(`GET: HTTP ${r.status} ${r.body.slice(0, 300)}`);
  };
}

export default async function run({ log = () => undefined } = {}) {
  return Scope.run(async (scope) => {
    const { etcd } = await startEtcdInScope(scope);
    log('  spawning svc-apiserver ...');
    const server = await spawnApiServer({
      etcdEndpoints: etcd.endpoints,
      extraArgs: ['--http2-max-streams-per-connection', String(IN_FLIGHT)],
    });
    scope.defer(() => server.stop());
    const h1 = apiClient(server, { maxSockets: IN_FLIGHT });
    scope.defer(() => h1.close());
    const h2 = h2Client(server);
    scope.defer(() => h2.close());
    const load = (op) => runLoad({ concurrency: IN_FLIGHT, warmupMs: WARMUP_MS, durationMs: MEASURE_MS, op });

    log(`  ConfigMap creates, ${IN_FLIGHT} in flight: HTTP/1.1, then HTTP/2 ...`);
    const create1 = await load(creates(h1, 'h1'));
    mustNotFail('HTTP/1.1 create', create1);
    const create2 = await load(creates(h2, 'h2'));
    mustNotFail('HTTP/2 create', create2);

    const seed = await h1.call('POST', PATH, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'bench-get' },
      data: { payload: PAYLOAD },
    });
    if (seed.status !== 201) throw new Error(`seed: HTTP ${seed.status}`);
    log(`  GETs of one ConfigMap, ${IN_FLIGHT} in flight: HTTP/1.1, then HTTP/2 ...`);
    const get1 = await load(gets(h1));
    mustNotFail('HTTP/1.1 get', get1);
    const get2 = await load(gets(h2));
    mustNotFail('HTTP/2 get', get2);

    return [
      result({
        name: 'ConfigMap creates/s over HTTP/2 (64 streams, one connection) vs HTTP/1.1 (64 connections)',
        short: 'h2 creates/s vs h1.1',
        value: create2.opsPerSec,
        ceiling: create1.opsPerSec,
        unit: '/s',
        detail: `h2 ${fmtLatency(create2)}; h1.1 ${fmtLatency(create1)}`,
      }),
      result({
        name: 'ConfigMap GETs/s over HTTP/2 (64 streams, one connection) vs HTTP/1.1 (64 connections)',
        short: 'h2 GETs/s vs h1.1',
        value: get2.opsPerSec,
        ceiling: get1.opsPerSec,
        unit: '/s',
        detail: `h2 ${fmtLatency(get2)}; h1.1 ${fmtLatency(get1)}`,
      }),
    ];
  });
}

await runIfMain(import.meta.url, run);
