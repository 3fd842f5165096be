import type { Container } from '@svc/api';
import { ContainerConfigError, expandVars, resourceFieldValue } from './environment.js';

describe("resourceFieldRef values (Kubernetes' downward API)", () => {
  const c: Container = { name: 'c', resources: { limits: { cpu: '250m', memory: '64Mi' }, requests: { cpu: '100m' } } };
  const node = { cpu: '2', memory: '8Gi', 'ephemeral-storage': '100Gi' };

  it('divides the limit or request by the divisor and rounds up; CPU in whole cores by default', () => {
    expect(resourceFieldValue(c, { resource: 'limits.cpu' }, node)).toBe('1');
    expect(resourceFieldValue(c, { resource: 'limits.cpu', divisor: '1m' }, node)).toBe('250');
    expect(resourceFieldValue(c, { resource: 'requests.cpu', divisor: '1m' }, node)).toBe('100');
    expect(resourceFieldValue(c, { resource: 'limits.memory' }, node)).toBe(String(64 * 2 ** 20));
    expect(resourceFieldValue(c, { resource: 'limits.memory', divisor: '1Mi' }, node)).toBe('64');
    expect(resourceFieldValue(c, { resource: 'limits.memory', divisor: '1G' }, node)).toBe('1');
  });

  it("a limit the container does not set is the node's allocatable; a request it does not set is 0", () => {
    expect(resourceFieldValue(c, { resource: 'limits.ephemeral-storage', divisor: '1Gi' }, node)).toBe('100');
    expect(resourceFieldValue({ name: 'x' }, { resource: 'limits.cpu' }, node)).toBe('2');
    expect(resourceFieldValue(c, { resource: 'requests.memory' }, node)).toBe('0');
  });

  it('a divisor of 0 (how kubectl sends an unset one) means 1', () => {
    expect(resourceFieldValue(c, { resource: 'limits.cpu', divisor: '0' }, node)).toBe('1');
    expect(resourceFieldValue(c, { resource: 'limits.memory', divisor: '0' }, node)).toBe(String(64 * 2 ** 20));
  });

  it('an unknown resource or a negative divisor is a config error', () => {
    expect(() => resourceFieldValue(c, { resource: 'limits.gpu' }, node)).toThrow(ContainerConfigError);
    expect(() => resourceFieldValue(c, { resource: 'limits.cpu', divisor: '-1' }, node)).toThrow(/divisor/);
  });
});

describe('$(VAR) expansion', () => {
  it('expands known variables, keeps unknown references, and $$ escapes', () => {
    const env = new Map([['A', 'x']]);
    expect(expandVars('$(A)-$(B)-$$(A)', env)).toBe('x-$(B)-$(A)');
  });
});
