// RuntimeClass and its admission plugin on a real server (etcd, HTTPS): validation with
// Kubernetes' paths, the immutable handler, Table columns; pods get the class's overhead, node
// selector and tolerations, and are refused (Kubernetes' messages) for a missing class, a
// conflicting node selector or an overhead of their own.
import type { Pod, RuntimeClass } from '@svc/api';
import { expectCode, startKubectlEnv, uniqueName, type HttpResponse, type KubectlEnv } from '@svc/testing';
import { podNamespace, postPod } from './pod-admission-testing.js';

let env: KubectlEnv;
const path = '/apis/node.svc.io/v1/runtimeclasses';

beforeAll(async () => {
  env = await startKubectlEnv();
});
afterAll(async () => {
  await env.stop();
});

function createClass(name: string, body: Partial<RuntimeClass>): Promise<HttpResponse> {
  return env.server.client.post(path, {
    apiVersion: 'node.svc.io/v1',
    kind: 'RuntimeClass',
    metadata: { name },
    ...body,
  });
}

const namespace = (): Promise<string> => podNamespace(env.server.client, 'rc');

const createPod = (ns: string, spec: object, name?: string): Promise<HttpResponse> =>
  postPod(env.server.client, { namespace: ns, spec, name });

describe('RuntimeClass', () => {
  it('validates as Kubernetes and keeps the handler', async () => {
    const bad = await createClass(uniqueName('bad'), {
      handler: 'Not_A_Label',
      overhead: { podFixed: { cpu: '-1', 'example.com/x': '1' } },
      scheduling: { nodeSelector: { 'a/b/c': 'x' }, tolerations: [{ key: 'k', operator: 'Exists', value: 'v' }] },
    });
    expect(bad.status).toBe(422);
    const message = bad.json<{ message: string }>().message;
    expect(message).toContain('handler: Invalid value: "Not_A_Label": a lowercase RFC 1123 label must consist of');
    expect(message).toContain('overhead.limits[cpu]: Invalid value: "-1": must be greater than or equal to 0');
    expect(message).toContain('scheduling.nodeSelector: Invalid value: "a/b/c"');
    expect(message).toContain(
      'scheduling.tolerations.tolerations[0].operator: Invalid value: "v": value must be empty when `operator` is \'Exists\'',
    );
    const name = uniqueName('rc');
    const rc = expectCode(
      await createClass(name, { handler: 'runc', overhead: { podFixed: { memory: '1024Mi' } } }),
      201,
    ) as RuntimeClass;
    expect(rc.overhead?.podFixed).toEqual({ memory: '1Gi' });
    const moved = await env.server.client.put(`${path}/${name}`, { ...rc, handler: 'kata' });
    expect(moved.status).toBe(422);
    expect(moved.json<{ message: string }>().message).toContain('handler: Invalid value: "kata": field is immutable');
    const table = (await env.ok(['get', 'runtimeclasses.node.svc.io', name])).stdout;
    expect(table).toMatch(new RegExp(`^NAME\\s+HANDLER\\s+AGE\\n${name}\\s+runc\\s+\\S+\\n$`));
  });

  it("gives pods the class's overhead, node selector and tolerations", async () => {
    const ns = await namespace();
    const name = uniqueName('kata');
    expectCode(
      await createClass(name, {
        handler: 'kata',
        overhead: { podFixed: { cpu: '250m', memory: '120Mi' } },
        scheduling: {
          nodeSelector: { sandbox: 'kata' },
          tolerations: [
            { key: 'sandbox', operator: 'Equal', value: 'kata', effect: 'NoSchedule' },
            { key: 'dedicated', operator: 'Exists' },
          ],
        },
      }),
      201,
    );
    const pod = expectCode(
      await createPod(ns, {
        runtimeClassName: name,
        nodeSelector: { zone: 'a' },
        tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'x', effect: 'NoSchedule' }],
      }),
      201,
    ) as Pod;
    expect(pod.spec.overhead).toEqual({ cpu: '250m', memory: '120Mi' });
    expect(pod.spec.nodeSelector).toEqual({ zone: 'a', sandbox: 'kata' });
    // The pod's own toleration is covered by the class's broader one (Kubernetes' MergeTolerations);
    // DefaultTolerationSeconds ran before (Kubernetes' order).
    expect(pod.spec.tolerations).toEqual([
      { key: 'node.svc.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
      { key: 'node.svc.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
      { key: 'sandbox', operator: 'Equal', value: 'kata', effect: 'NoSchedule' },
      { key: 'dedicated', operator: 'Exists' },
    ]);

    const conflict = await createPod(ns, { runtimeClassName: name, nodeSelector: { sandbox: 'gvisor' } }, 'c');
    expect(conflict.status).toBe(403);
    expect(conflict.json<{ message: string }>().message).toBe(
      'pods "c" is forbidden: conflict: runtimeClass.scheduling.nodeSelector[sandbox] = kata; pod.spec.nodeSelector[sandbox] = gvisor',
    );
    const overhead = await createPod(ns, { runtimeClassName: name, overhead: { cpu: '1' } }, 'o');
    expect(overhead.json<{ message: string }>().message).toBe(
      "pods \"o\" is forbidden: pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead",
    );
    const same = expectCode(
      await createPod(ns, { runtimeClassName: name, overhead: { cpu: '0.25', memory: '120Mi' } }),
      201,
    ) as Pod;
    expect(same.spec.overhead).toEqual({ cpu: '250m', memory: '120Mi' });
  });

  it('refuses a missing class and an overhead without one', async () => {
    const ns = await namespace();
    const missing = await createPod(ns, { runtimeClassName: 'gvisor' }, 'g');
    expect(missing.status).toBe(403);
    expect(missing.json<{ message: string }>().message).toBe(
      'pods "g" is forbidden: pod rejected: RuntimeClass "gvisor" not found',
    );
    const plain = uniqueName('plain');
    expectCode(await createClass(plain, { handler: 'runc' }), 201);
    const overhead = await createPod(ns, { runtimeClassName: plain, overhead: { cpu: '1' } }, 'h');
    expect(overhead.json<{ message: string }>().message).toBe(
      'pods "h" is forbidden: pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead',
    );
    const none = await createPod(ns, { overhead: { cpu: '1' } }, 'n');
    expect(none.status).toBe(403);
  });
});
