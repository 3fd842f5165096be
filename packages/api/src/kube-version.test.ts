import { byKubeVersionPriority, compareKubeVersions } from './kube-version.js';

describe('Kubernetes version priority', () => {
  it('orders GA, beta, alpha, then other strings', () => {
    expect(
      byKubeVersionPriority(['v1alpha1', 'foo', 'v2', 'v1beta2', 'v1', 'v11alpha2', 'v10beta3', 'bar', 'v12']),
    ).toEqual(['v12', 'v2', 'v1', 'v10beta3', 'v1beta2', 'v11alpha2', 'v1alpha1', 'bar', 'foo']);
  });

  it('is antisymmetric', () => {
    expect(compareKubeVersions('v1', 'v1beta1')).toBeGreaterThan(0);
    expect(compareKubeVersions('v1beta1', 'v1')).toBeLessThan(0);
    expect(compareKubeVersions('v1', 'v1')).toBe(0);
  });
});
