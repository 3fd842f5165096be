import { createDefaultServiceAccount } from '@svc/testing';
import type { ApiObject, Event } from '@svc/api';
import { EventRecorder } from './event-recorder.js';
import { ResourceClient } from './resource-client.js';
import { withServerAndClient } from './server-testing.js';

const env = withServerAndClient();
// No controller manager runs: pods in `default` need its ServiceAccount.
beforeAll(() => createDefaultServiceAccount(env.client, 'default'));

describe('EventRecorder', () => {
  it('writes core/v1 Events about an object and counts repeats of the same one', async () => {
    const pods = new ResourceClient(env.client, { group: '', version: 'v1', resource: 'pods' }).namespace('default');
    const pod = await pods.create({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'ev' },
      spec: { containers: [{ name: 'c', image: 'busybox' }] },
    } as ApiObject);
    const rec = new EventRecorder(env.client, { component: 'default-scheduler', instance: 'default-scheduler-host' });
    const failed = {
      object: pod,
      apiVersion: 'v1',
      kind: 'Pod',
      type: 'Warning',
      reason: 'FailedScheduling',
      action: 'Scheduling',
      message: 'no nodes available to schedule pods',
    } as const;
    rec.event(failed);
    rec.event(failed);
    rec.event({
      object: pod,
      apiVersion: 'v1',
      kind: 'Pod',
      type: 'Normal',
      reason: 'Scheduled',
      action: 'Binding',
      message: 'Successfully assigned default/ev to n',
    });
    await rec.flush();
    const events = (
      await new ResourceClient<Event>(env.client, { group: '', version: 'v1', resource: 'events' })
        .namespace('default')
        .list()
    ).items;
    const byReason = (r: string) => events.filter((e) => e.reason === r);
    expect(byReason('FailedScheduling')).toHaveLength(1);
    expect(byReason('FailedScheduling')[0]).toMatchObject({
      type: 'Warning',
      count: 2,
      action: 'Scheduling',
      message: 'no nodes available to schedule pods',
      involvedObject: { kind: 'Pod', apiVersion: 'v1', name: 'ev', namespace: 'default', uid: pod.metadata.uid },
      source: { component: 'default-scheduler' },
      reportingComponent: 'default-scheduler',
      reportingInstance: 'default-scheduler-host',
    });
    expect(byReason('FailedScheduling')[0]?.metadata.name).toMatch(/^ev\.[0-9a-f]+$/);
    expect(byReason('Scheduled')).toHaveLength(1);
    expect(byReason('Scheduled')[0]).toMatchObject({ type: 'Normal', count: 1 });
  });

  it('without an instance writes the older kind of core/v1 Event (no eventTime, no action), which the server accepts', async () => {
    const rec = new EventRecorder(env.client, { component: 'replicaset-controller' });
    const rs = { metadata: { name: 'web-1', namespace: 'default', uid: 'u-1' } };
    rec.event({
      object: rs,
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      type: 'Normal',
      reason: 'SuccessfulCreate',
      action: 'Create',
      message: 'Created pod: web-1-abcde',
    });
    await rec.flush();
    const events = (
      await new ResourceClient<Event>(env.client, { group: '', version: 'v1', resource: 'events' })
        .namespace('default')
        .list()
    ).items;
    const e = events.find((x) => x.reason === 'SuccessfulCreate');
    expect(e).toMatchObject({
      type: 'Normal',
      count: 1,
      message: 'Created pod: web-1-abcde',
      source: { component: 'replicaset-controller' },
      reportingComponent: 'replicaset-controller',
      involvedObject: { kind: 'ReplicaSet', apiVersion: 'apps/v1', name: 'web-1' },
    });
    expect(e?.eventTime).toBeUndefined();
    expect(e?.action).toBeUndefined();
  });

  it("drops events beyond 25 per object, then lets one through per 5 minutes (client-go's spam filter)", async () => {
    const clock = { t: 1_000_000 };
    const rec = new EventRecorder(env.client, { component: 'spammer', now: () => clock.t });
    const spam = (name: string, type: 'Normal' | 'Warning', message: string): void =>
      rec.event({
        object: { metadata: { name, namespace: 'default', uid: `uid-${name}` } },
        apiVersion: 'v1',
        kind: 'ConfigMap',
        type,
        reason: 'Spam',
        message,
      });
    for (let i = 0; i < 30; i++) spam('noisy', 'Warning', `message ${i}`);
    spam('quiet', 'Normal', 'another object has its own bucket');
    clock.t += 299_000;
    spam('noisy', 'Warning', 'still too early');
    clock.t += 2_000;
    spam('noisy', 'Warning', 'after five minutes');
    await rec.flush();
    const list = (
      await new ResourceClient<Event>(env.client, { group: '', version: 'v1', resource: 'events' })
        .namespace('default')
        .list({ fieldSelector: 'reason=Spam' })
    ).items;
    const noisy = list.filter((e) => e.involvedObject?.name === 'noisy').map((e) => e.message ?? '');
    expect(noisy.sort()).toEqual(
      [...Array.from({ length: 25 }, (_, i) => `message ${i}`), 'after five minutes'].sort(),
    );
    expect(list.filter((e) => e.involvedObject?.name === 'quiet')).toHaveLength(1);
  });

  it('keeps at most 1000 events waiting to be written and drops the rest', async () => {
    const rec = new EventRecorder(env.client, { component: 'flooder' });
    for (let i = 0; i < 1100; i++)
      rec.event({
        object: { metadata: { name: `f${i}`, namespace: 'default', uid: `f${i}` } },
        apiVersion: 'v1',
        kind: 'ConfigMap',
        type: 'Normal',
        reason: 'Flood',
        message: 'm',
      });
    await rec.flush();
    const list = await new ResourceClient(env.client, { group: '', version: 'v1', resource: 'events' })
      .namespace('default')
      .list({ fieldSelector: 'reason=Flood' });
    expect(list.items).toHaveLength(1000);
    // 1000 creates one after another, as client-go's recorder writes: 10-40 s in full runs, and
    // over 60 s once on a loaded machine.
  }, 180_000);

  it('never throws: a failed write is logged', async () => {
    const warnings: string[] = [];
    const rec = new EventRecorder(env.client, {
      component: 'x',
      logger: { info() {}, error() {}, warn: (m) => warnings.push(m) },
    });
    rec.event({
      object: { metadata: { name: 'p', namespace: 'no-such-namespace' } },
      apiVersion: 'v1',
      kind: 'Pod',
      type: 'Normal',
      reason: 'R',
      action: 'A',
      message: 'm',
    });
    await rec.flush();
    expect(warnings).toEqual(['could not write event']);
  });
});
