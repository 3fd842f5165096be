// --allow-privileged: pod and pod-template validation refuse privileged containers (and init
// containers) unless the process allows them, with Kubernetes' path and message.
import { fieldErrorMessage, type ApiObject } from '@svc/api';
import { setAllowPrivileged } from './capabilities.js';
import { podStrategy, validatePodSpec } from './pod.js';

const spec = {
  containers: [{ name: 'c', image: 'i', securityContext: { privileged: true } }],
  initContainers: [{ name: 'i', image: 'i', securityContext: { privileged: false } }],
};

afterEach(() => setAllowPrivileged(false));

describe('--allow-privileged', () => {
  it("refuses privileged containers when false (Kubernetes' default)", async () => {
    const pod = { metadata: { name: 'p' }, spec: structuredClone(spec) } as ApiObject;
    const errs = await Promise.resolve(podStrategy.validate?.(pod, { subresource: '' }) ?? []);
    expect(errs.map(fieldErrorMessage)).toEqual([
      'spec.containers[0].securityContext.privileged: Forbidden: disallowed by cluster policy',
    ]);
    expect(validatePodSpec(structuredClone(spec), 'spec.template.spec').map(fieldErrorMessage)).toEqual([
      'spec.template.spec.containers[0].securityContext.privileged: Forbidden: disallowed by cluster policy',
    ]);
  });

  it('accepts them when true', () => {
    setAllowPrivileged(true);
    expect(validatePodSpec(structuredClone(spec), 'spec')).toEqual([]);
  });
});
