import { isEnabled, parseRuntimeConfig, type RuntimeConfig } from './runtime-config.js';

function shape(rc: RuntimeConfig): Record<string, Record<string, boolean>> {
  return {
    stages: Object.fromEntries(rc.stages),
    groupVersions: Object.fromEntries(rc.groupVersions),
    resources: Object.fromEntries(rc.resources),
  };
}

describe('parseRuntimeConfig', () => {
  test.each<[string | string[], ReturnType<typeof shape>]>([
    ['', { stages: {}, groupVersions: {}, resources: {} }],
    ['batch/v1=false', { stages: {}, groupVersions: { 'batch/v1': false }, resources: {} }],
    ['batch/v2alpha1', { stages: {}, groupVersions: { 'batch/v2alpha1': true }, resources: {} }],
    ['batch/v2alpha1=', { stages: {}, groupVersions: { 'batch/v2alpha1': true }, resources: {} }],
    ['v1=false', { stages: {}, groupVersions: { v1: false }, resources: {} }],
    ['/v1=false', { stages: {}, groupVersions: { v1: false }, resources: {} }],
    ['/v1/pods=false', { stages: {}, groupVersions: {}, resources: { 'v1/pods': false } }],
    ['v1/pods=false', { stages: {}, groupVersions: {}, resources: { 'v1/pods': false } }],
    ['apps/v1/deployments=0', { stages: {}, groupVersions: {}, resources: { 'apps/v1/deployments': false } }],
    [
      'api/all=false,api/ga=true,api/beta,api/alpha=f',
      { stages: { all: false, ga: true, beta: true, alpha: false }, groupVersions: {}, resources: {} },
    ],
    [
      ' a.svc.io/v1beta1 = true , , x/v1=false ',
      { stages: {}, groupVersions: { 'a.svc.io/v1beta1': true, 'x/v1': false }, resources: {} },
    ],
    [['x/v1=false', 'x/v1=true'], { stages: {}, groupVersions: { 'x/v1': true }, resources: {} }],
    ['x/v1=false,x/v1', { stages: {}, groupVersions: { 'x/v1': true }, resources: {} }],
  ])('%j', (input, want) => {
    expect(shape(parseRuntimeConfig(input))).toEqual(want);
  });

  test.each<[string, string]>([
    ['=true', 'invalid entry "=true": the key is empty'],
    ['batch/v1=maybe', 'invalid value of batch/v1: maybe, err: strconv.ParseBool: parsing "maybe": invalid syntax'],
    ['api/all=nope', 'invalid value of api/all: nope, err: strconv.ParseBool: parsing "nope": invalid syntax'],
    ['a/b/c/d', 'invalid key "a/b/c/d": too many slashes'],
    ['batch', 'invalid key "batch": expected <group>/<version>[/<resource>]'],
    ['batch/', 'invalid key "batch/": the version is empty'],
    ['batch/v1/', 'invalid key "batch/v1/": the resource is empty'],
    ['v1/Pods', 'invalid key "v1/Pods": group/version/resource and resource is always lowercase plural, not "Pods"'],
    [
      'apps/v1/Deployments',
      'invalid key "apps/v1/Deployments": group/version/resource and resource is always lowercase plural, not "Deployments"',
    ],
  ])('%p is rejected', (input, message) => {
    expect(() => parseRuntimeConfig(input)).toThrow(message);
  });
});

describe('isEnabled', () => {
  const q = (group: string, version: string, defaultEnabled: boolean, resource?: string) =>
    [group, version, resource, defaultEnabled] as const;

  test.each<[string, ReturnType<typeof q>, boolean]>([
    ['', q('batch', 'v1', true), true],
    ['', q('batch', 'v1beta1', false), false],
    ['batch/v1=false', q('batch', 'v1', true), false],
    ['batch/v1=false', q('batch', 'v1', true, 'jobs'), false],
    ['batch/v1=false,batch/v1/jobs=true', q('batch', 'v1', true, 'jobs'), true],
    ['batch/v1=false,batch/v1/jobs=true', q('batch', 'v1', true, 'cronjobs'), false],
    ['batch/v1/jobs=false', q('batch', 'v1', true), true],
    ['batch/v1/jobs=false', q('batch', 'v1', true, 'jobs'), false],
    ['v1=false', q('', 'v1', true, 'pods'), false],
    ['v1/pods=false', q('', 'v1', true, 'pods'), false],
    ['v1/pods=false', q('', 'v1', true, 'services'), true],
    ['api/all=false', q('apps', 'v1', true), false],
    ['api/all=false,api/ga=true', q('apps', 'v1', true), true],
    ['api/all=false,api/ga=true', q('x', 'v1beta1', true), false],
    ['api/all=true', q('x', 'v1alpha1', false), true],
    ['api/alpha=true', q('x', 'v1alpha1', false, 'things'), true],
    ['api/alpha=true', q('x', 'v1beta1', false), false],
    ['api/beta=false', q('x', 'v2beta3', true), false],
    ['api/beta=false,x/v2beta3=true', q('x', 'v2beta3', false), true],
    ['api/all=false,x/v1/things=true', q('x', 'v1', true, 'things'), true],
    ['x/v1beta1=true', q('x', 'v1beta1', false, 'offbydefault'), true],
  ])('%p: %j → %p', (flag, query, want) => {
    expect(isEnabled(parseRuntimeConfig(flag), ...query)).toBe(want);
  });
});
