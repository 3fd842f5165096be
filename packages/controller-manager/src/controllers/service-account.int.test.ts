import { ResourceClient } from '@svc/client';
import { uniqueName, waitFor } from '@svc/testing';
import { withControllerManager } from '../cm-testing.js';
import { R } from '../resources.js';

const env = withControllerManager(['--controllers=serviceaccount,root-ca-cert-publisher']);

describe('serviceaccount-controller and root-ca-certificate-publisher-controller', () => {
  const namespaces = () => new ResourceClient(env.api, R.namespaces());
  const status = async (path: string) => (await env.api.request('GET', path)).status;

  it('gives every existing namespace a default ServiceAccount and the root CA ConfigMap', async () => {
    for (const ns of ['default', 'svc-system', 'svc-public']) {
      await waitFor(
        `the default ServiceAccount in ${ns}`,
        async () => (await status(`/api/v1/namespaces/${ns}/serviceaccounts/default`)) === 200,
      );
      await waitFor(
        `the root CA ConfigMap in ${ns}`,
        async () => (await status(`/api/v1/namespaces/${ns}/configmaps/svc-root-ca.crt`)) === 200,
      );
    }
  });

  it('publishes the CA the API server is trusted with, as ca.crt only', async () => {
    const cm = await new ResourceClient(env.api, R.configMaps()).namespace('default').get('svc-root-ca.crt');
    expect(cm.data).toEqual({ 'ca.crt': env.server.server.caPem });
    expect(cm.metadata.annotations?.['svc.io/description']).toMatch(/CA bundle/);
  });

  it('does both for a new namespace', async () => {
    const ns = uniqueName('sa');
    await namespaces().create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    await waitFor(
      'the default ServiceAccount',
      async () => (await status(`/api/v1/namespaces/${ns}/serviceaccounts/default`)) === 200,
    );
    await waitFor(
      'the root CA ConfigMap',
      async () => (await status(`/api/v1/namespaces/${ns}/configmaps/svc-root-ca.crt`)) === 200,
    );
  });

  it('puts back a deleted default ServiceAccount and a deleted or edited CA ConfigMap', async () => {
    const ns = uniqueName('sa');
    await namespaces().create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    const accounts = new ResourceClient(env.api, R.serviceAccounts()).namespace(ns);
    const configMaps = new ResourceClient(env.api, R.configMaps()).namespace(ns);
    const first = await waitFor('the default ServiceAccount', async () =>
      accounts.get('default').catch(() => undefined),
    );
    await accounts.delete('default');
    await waitFor('a new default ServiceAccount', async () => {
      const sa = await accounts.get('default').catch(() => undefined);
      return sa && sa.metadata.uid !== first.metadata.uid;
    });
    const cm = await waitFor('the CA ConfigMap', async () => configMaps.get('svc-root-ca.crt').catch(() => undefined));
    await configMaps.update({ ...cm, data: { 'ca.crt': 'tampered', extra: 'x' } });
    await waitFor('the CA restored', async () => {
      const now = await configMaps.get('svc-root-ca.crt');
      return JSON.stringify(now.data) === JSON.stringify({ 'ca.crt': env.server.server.caPem });
    });
    await configMaps.delete('svc-root-ca.crt');
    await waitFor(
      'the CA ConfigMap made again',
      async () => (await status(`/api/v1/namespaces/${ns}/configmaps/svc-root-ca.crt`)) === 200,
    );
  });
});
