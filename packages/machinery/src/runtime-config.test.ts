import { isEnabled, parseRuntimeConfig, type EnablementQuery, type RuntimeConfig } from './runtime-config.js';

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
  test.each<[string, EnablementQuery, boolean]>([
    ['', { group: 'batch', version: 'v1', defaultEnabled: true }, true],
    ['', { group: 'batch', version: 'v1beta1', defaultEnabled: false }, false],
    ['batch/v1=false', { group: 'batch', version: 'v1', defaultEnabled: true }, false],
    ['batch/v1=false', { group: 'batch', version: 'v1', resource: 'jobs', defaultEnabled: true }, false],
    [
      'batch/v1=false,batch/v1/jobs=true',
      { group: 'batch', version: 'v1', resource: 'jobs', defaultEnabled: true },
      true,
    ],
    [
      'batch/v1=false,batch/v1/jobs=true',
      { group: 'batch', version: 'v1', resource: 'cronjobs', defaultEnabled: true },
      false,
    ],
    ['batch/v1/jobs=false', { group: 'batch', version: 'v1', defaultEnabled: true }, true],
    ['batch/v1/jobs=false', { group: 'batch', version: 'v1', resource: 'jobs', defaultEnabled: true }, false],
    ['v1=false', { group: '', version: 'v1', resource: 'pods', defaultEnabled: true }, false],
    ['v1/pods=false', { group: '', version: 'v1', resource: 'pods', defaultEnabled: true }, false],
    ['v1/pods=false', { group: '', version: 'v1', resource: 'services', defaultEnabled: true }, true],
    ['api/all=false', { group: 'apps', version: 'v1', defaultEnabled: true }, false],
    ['api/all=false,api/ga=true', { group: 'apps', version: 'v1', defaultEnabled: true }, true],
    ['api/all=false,api/ga=true', { group: 'x', version: 'v1beta1', defaultEnabled: true }, false],
    ['api/all=true', { group: 'x', version: 'v1alpha1', defaultEnabled: false }, true],
    ['api/alpha=true', { group: 'x', version: 'v1alpha1', resource: 'things', defaultEnabled: false }, true],
    ['api/alpha=true', { group: 'x', version: 'v1beta1', defaultEnabled: false }, false],
    ['api/beta=false', { group: 'x', version: 'v2beta3', defaultEnabled: true }, false],
    ['api/beta=false,x/v2beta3=true', { group: 'x', version: 'v2beta3', defaultEnabled: false }, true],
    ['api/all=false,x/v1/things=true', { group: 'x', version: 'v1', resource: 'things', defaultEnabled: true }, true],
    ['x/v1beta1=true', { group: 'x', version: 'v1beta1', resource: 'offbydefault', defaultEnabled: false }, true],
  ])('%p: %j → %p', (flag, query, want) => {
    expect(isEnabled(parseRuntimeConfig(flag), query)).toBe(want);
  });
});
