import { API_SERVER_GATES, FeatureGates, type FeatureSpec } from './feature-gates.js';

const TABLE: FeatureSpec[] = [
  { name: 'AlphaOne', stage: 'ALPHA', default: false },
  { name: 'AlphaTwo', stage: 'ALPHA', default: false },
  { name: 'BetaOn', stage: 'BETA', default: true },
  { name: 'BetaOff', stage: 'BETA', default: false },
  { name: 'Done', stage: 'GA', default: true },
  { name: 'Locked', stage: 'BETA', default: true, lockToDefault: true },
  { name: 'Old', stage: 'DEPRECATED', default: false },
];

function gates(...flags: string[]): FeatureGates {
  const g = new FeatureGates(TABLE);
  g.parse(flags);
  return g;
}

describe('FeatureGates', () => {
  test('defaults', () => {
    const g = gates();
    expect(g.enabled('AlphaOne')).toBe(false);
    expect(g.enabled('BetaOn')).toBe(true);
    expect(g.enabled('BetaOff')).toBe(false);
    expect(g.enabled('Done')).toBe(true);
    expect(g.enabled('AllAlpha')).toBe(false);
    expect(g.enabled('AllBeta')).toBe(false);
  });

  test.each<[string[], Record<string, boolean>]>([
    [['AlphaOne=true'], { AlphaOne: true, AlphaTwo: false }],
    [['AlphaOne=true,BetaOn=false'], { AlphaOne: true, BetaOn: false }],
    [['AlphaOne=true', 'AlphaOne=false'], { AlphaOne: false }],
    [['AlphaOne=true,AlphaOne=false'], { AlphaOne: false }],
    [['svc:AlphaOne=true'], { AlphaOne: true }],
    [[' svc : AlphaOne = true , BetaOn=false '], { AlphaOne: true, BetaOn: false }],
    [[':AlphaOne=true'], { AlphaOne: true }],
    [['other:AlphaOne=true'], { AlphaOne: false }],
    [['other:Unknown=maybe,AlphaTwo=1'], { AlphaTwo: true }],
    [['AlphaOne=t,BetaOn=F'], { AlphaOne: true, BetaOn: false }],
    [['AllAlpha=true'], { AlphaOne: true, AlphaTwo: true, BetaOff: false, AllAlpha: true }],
    [['AllAlpha=true,AlphaTwo=false'], { AlphaOne: true, AlphaTwo: false }],
    [['AlphaTwo=false', 'AllAlpha=true'], { AlphaOne: true, AlphaTwo: false }],
    [['AllBeta=false'], { BetaOn: false, BetaOff: false, AlphaOne: false, Locked: true, AllBeta: false }],
    [['AllBeta=true'], { BetaOn: true, BetaOff: true }],
    [['AllBeta=false,BetaOn=true'], { BetaOn: true }],
    [['Done=true,Locked=true'], { Done: true, Locked: true }],
    [['Old=true'], { Old: true }],
    [[''], { AlphaOne: false }],
    [[',,'], { AlphaOne: false }],
  ])('%j', (flags, want) => {
    const g = gates(...flags);
    for (const [name, value] of Object.entries(want)) expect([name, g.enabled(name)]).toEqual([name, value]);
  });

  test.each<[string[], string]>([
    [['Nope=true'], 'unrecognized feature gate: Nope'],
    [['svc:Nope=true'], 'unrecognized feature gate: Nope'],
    [['alphaone=true'], 'unrecognized feature gate: alphaone'],
    [['AlphaOne'], 'missing bool value for AlphaOne'],
    [['AlphaOne=yes'], 'invalid value of AlphaOne=yes, err: strconv.ParseBool: parsing "yes": invalid syntax'],
    [['AlphaOne='], 'invalid value of AlphaOne=, err: strconv.ParseBool: parsing "": invalid syntax'],
    [['Done=false'], 'cannot set feature gate Done to false, feature is locked to true'],
    [['Locked=false'], 'cannot set feature gate Locked to false, feature is locked to true'],
  ])('%j is rejected', (flags, message) => {
    expect(() => gates(...flags)).toThrow(message);
  });

  test('parse is atomic', () => {
    const g = new FeatureGates(TABLE);
    expect(() => g.parse(['AlphaOne=true,Nope=true'])).toThrow('unrecognized feature gate: Nope');
    expect(g.enabled('AlphaOne')).toBe(false);
  });

  test('set', () => {
    const g = new FeatureGates(TABLE);
    g.set('AlphaOne', true);
    expect(g.enabled('AlphaOne')).toBe(true);
    expect(() => g.set('Done', false)).toThrow('locked to true');
  });

  test('enabled on an unknown gate throws', () => {
    expect(() => gates().enabled('Nope')).toThrow('feature "Nope" is not registered in FeatureGate');
  });

  test('a custom component prefix', () => {
    const g = new FeatureGates(TABLE, { component: 'svclet' });
    g.parse(['svc:AlphaOne=true,svclet:AlphaTwo=true,BetaOn=false']);
    expect([g.enabled('AlphaOne'), g.enabled('AlphaTwo'), g.enabled('BetaOn')]).toEqual([false, true, false]);
  });

  test('duplicate registration is a programming error', () => {
    expect(() => new FeatureGates([TABLE[0]!, TABLE[0]!])).toThrow('registered twice');
  });

  test('known lists settable gates as Kubernetes prints them', () => {
    expect(gates().known()).toEqual([
      'AllAlpha=true|false (ALPHA - default=false)',
      'AllBeta=true|false (BETA - default=false)',
      'AlphaOne=true|false (ALPHA - default=false)',
      'AlphaTwo=true|false (ALPHA - default=false)',
      'BetaOff=true|false (BETA - default=false)',
      'BetaOn=true|false (BETA - default=true)',
      'Locked=true|false (BETA - default=true)',
    ]);
  });

  test('snapshot', () => {
    expect(gates('AlphaOne=true').snapshot()).toEqual({
      AllAlpha: false,
      AllBeta: false,
      AlphaOne: true,
      AlphaTwo: false,
      BetaOff: false,
      BetaOn: true,
      Done: true,
      Locked: true,
      Old: false,
    });
  });
});

describe('API_SERVER_GATES', () => {
  const g = new FeatureGates(API_SERVER_GATES);
  test.each<[string, string, boolean]>([
    ['APIResponseCompression', 'BETA', true],
    ['APIServerIdentity', 'BETA', true],
    ['APIServerTracing', 'BETA', true],
    ['AnonymousAuthConfigurableEndpoints', 'ALPHA', false],
    ['AuthorizeWithSelectors', 'ALPHA', false],
    ['AuthorizeNodeWithSelectors', 'ALPHA', false],
    ['ComponentSLIs', 'BETA', true],
    ['ConsistentListFromCache', 'BETA', true],
    ['CRDValidationRatcheting', 'BETA', true],
    ['CustomResourceFieldSelectors', 'BETA', true],
    ['MutatingAdmissionPolicy', 'ALPHA', false],
    ['ResilientWatchCacheInitialization', 'BETA', true],
    ['RetryGenerateName', 'BETA', true],
    ['SeparateCacheWatchRPC', 'BETA', true],
    ['StorageVersionAPI', 'ALPHA', false],
    ['StorageVersionHash', 'BETA', true],
    ['StructuredAuthenticationConfiguration', 'BETA', true],
    ['StructuredAuthorizationConfiguration', 'BETA', true],
    ['UnknownVersionInteroperabilityProxy', 'ALPHA', false],
    ['WatchFromStorageWithoutResourceVersion', 'BETA', false],
    ['WatchList', 'ALPHA', false],
    ['WatchListClient', 'BETA', false],
  ])('%s is %s, default %p', (name, stage, def) => {
    expect(API_SERVER_GATES.find((s) => s.name === name)).toEqual({ name, stage, default: def });
    expect(g.enabled(name)).toBe(def);
  });

  test('the table has exactly the spec gates', () => {
    expect(API_SERVER_GATES).toHaveLength(22);
  });

  test('WatchList can be enabled', () => {
    const w = new FeatureGates(API_SERVER_GATES);
    w.parse(['svc:WatchList=true']);
    expect(w.enabled('WatchList')).toBe(true);
  });
});
