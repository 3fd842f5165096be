import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inClusterConfig, SvcconfigError } from './svcconfig.js';
import { RestClient } from './rest-client.js';
import { withServerAndClient } from './server-testing.js';

const env = withServerAndClient();

describe('in-cluster configuration', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'svc-incluster-'));
  });
  afterAll(async () => rm(dir, { recursive: true, force: true }));

  it('reaches the API server named by SVC_SERVICE_HOST/PORT with the mounted token and CA', async () => {
    await writeFile(join(dir, 'token'), `${env.server.adminToken}\n`);
    await writeFile(join(dir, 'ca.crt'), env.server.server.caPem);
    await writeFile(join(dir, 'namespace'), 'team-a\n');
    const url = new URL(env.server.server.url);
    const config = inClusterConfig({ SVC_SERVICE_HOST: url.hostname, SVC_SERVICE_PORT: url.port }, dir);
    expect(config.namespace).toBe('team-a');
    expect(config.server).toBe(`https://${url.hostname}:${url.port}`);
    const client = new RestClient(config);
    try {
      expect((await client.request('GET', '/api/v1/namespaces/default')).status).toBe(200);
    } finally {
      client.close();
    }
  });

  it('says why it cannot be used outside a cluster or without the mounted files', () => {
    expect(() => inClusterConfig({}, dir)).toThrow(SvcconfigError);
    expect(() => inClusterConfig({}, dir)).toThrow(/SVC_SERVICE_HOST and SVC_SERVICE_PORT must be set/);
    expect(() =>
      inClusterConfig({ SVC_SERVICE_HOST: '10.0.0.1', SVC_SERVICE_PORT: '443' }, join(dir, 'missing')),
    ).toThrow(/in-cluster configuration: .*token/);
  });
});
