import { startTestApiServer, type TestApiServer } from '@svc/testing';
import { loadSvcconfig } from './svcconfig.js';
import { RestClient } from './rest-client.js';

/** Test helper (not exported): a real API server and a RestClient on its admin svcconfig. */
export interface ServerAndClient {
  server: TestApiServer;
  client: RestClient;
}

/** Starts both before the file's tests and stops both after them; fields are set in `beforeAll`. */
export function withServerAndClient(): ServerAndClient {
  const env = {} as ServerAndClient;
  beforeAll(async () => {
    env.server = await startTestApiServer();
    env.client = new RestClient(loadSvcconfig(env.server.svcconfigPath));
  });
  afterAll(async () => {
    env.client?.close();
    await env.server?.stop();
  });
  return env;
}
