import { podConfigAnnotation, type Pod } from '@svc/api';
import { decodeManifests, staticPod } from './static-pods.js';

const POD: Pod = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'web' },
  spec: { containers: [{ name: 'c', image: 'busybox', command: ['sleep', '9'] }] },
};

describe('static pod manifests', () => {
  it('decodes YAML and JSON, several documents, and lists of pods', () => {
    const yaml =
      'apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec: {containers: [{name: c, image: x}]}\n---\n' +
      JSON.stringify({ kind: 'List', items: [POD, { ...POD, metadata: { name: 'b' } }] });
    expect(decodeManifests(yaml).map((p) => p.metadata.name)).toEqual(['a', 'web', 'b']);
    expect(decodeManifests('')).toEqual([]);
  });

  it('rejects what is not a valid pod with the reason', () => {
    expect(() => decodeManifests('kind: Service\nmetadata: {name: x}')).toThrow('kind "Service" is not Pod');
    expect(() => decodeManifests('kind: Pod\nmetadata: {name: x}\nspec: {containers: []}')).toThrow(
      'spec.containers is required',
    );
    expect(() => decodeManifests('kind: Pod\nmetadata: {name: x}\nspec: {containers: [{name: c}]}')).toThrow(
      'container c: image is required',
    );
    expect(() => decodeManifests('a: [')).toThrow();
  });

  it("applies Kubernetes' static pod defaults: uid from the content, node and origin; name suffix; namespace; annotations", () => {
    const a = staticPod(POD, { source: 'file', origin: '/m/web.yaml', nodeName: 'Node-1' });
    expect(a.metadata).toMatchObject({ name: 'web-node-1', namespace: 'default' });
    expect(a.metadata.uid).toMatch(/^[0-9a-f]{32}$/);
    expect(a.metadata.annotations).toEqual({
      [podConfigAnnotation('hash')]: a.metadata.uid,
      [podConfigAnnotation('source')]: 'file',
    });
    expect(a.spec).toMatchObject({
      nodeName: 'Node-1',
      restartPolicy: 'Always',
      terminationGracePeriodSeconds: 30,
      tolerations: [{ operator: 'Exists', effect: 'NoExecute' }],
    });
    expect(a.spec.containers[0]).toMatchObject({
      imagePullPolicy: 'Always',
      terminationMessagePath: '/dev/termination-log',
    });
    expect(staticPod(POD, { source: 'file', origin: '/m/web.yaml', nodeName: 'Node-1' }).metadata.uid).toBe(
      a.metadata.uid,
    );
    expect(staticPod(POD, { source: 'file', origin: '/m/other.yaml', nodeName: 'Node-1' }).metadata.uid).not.toBe(
      a.metadata.uid,
    );
    expect(staticPod(POD, { source: 'file', origin: '/m/web.yaml', nodeName: 'node-2' }).metadata.uid).not.toBe(
      a.metadata.uid,
    );
    const changed: Pod = { ...POD, spec: { containers: [{ name: 'c', image: 'busybox:1', command: ['sleep', '9'] }] } };
    expect(staticPod(changed, { source: 'file', origin: '/m/web.yaml', nodeName: 'Node-1' }).metadata.uid).not.toBe(
      a.metadata.uid,
    );
  });
});
