import {
  API_SERVER_GATES,
  FeatureGates,
  componentFeatureGates,
  featuresAt,
  parseEmulatedVersion,
  type FeatureSpec,
} from './feature-gates.js';
import { SVC_FEATURE_GATES } from './feature-gate-table.js';

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
    [['other:AlphaOne=true'], 'component not registered: other'],
    [['AlphaTwo=true,wardle:Unknown=maybe'], 'component not registered: wardle'],
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
    const g = new FeatureGates(TABLE, { component: 'svclet', otherComponents: ['svc'] });
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

describe('the lifecycle rules', () => {
  test('GA and deprecated gates warn once when set', () => {
    const g = gates('Done=true,Old=true', 'Done=true,AlphaOne=true');
    expect(g.warnings).toEqual([
      'Setting GA feature gate Done=true. It will be removed in a future release.',
      'Setting deprecated feature gate Old=true. It will be removed in a future release.',
    ]);
  });
});

describe("Kubernetes 1.32's whole table", () => {
  const at132 = new Map(featuresAt(SVC_FEATURE_GATES, '1.32').map((s) => [s.name, s]));
  const at131 = new Map(featuresAt(SVC_FEATURE_GATES, '1.31').map((s) => [s.name, s]));

  test('agrees with the spec on every gate the spec lists', () => {
    for (const spec of API_SERVER_GATES) {
      const got = at132.get(spec.name);
      expect([spec.name, got?.stage, got?.default]).toEqual([spec.name, spec.stage, spec.default]);
    }
  });

  test('holds every gate once, sorted versions, and more than the spec lists', () => {
    const names = SVC_FEATURE_GATES.map((f) => f.name);
    expect(new Set(names).size).toBe(names.length);
    expect(at132.size).toBeGreaterThan(150);
    for (const f of SVC_FEATURE_GATES) {
      const minors = f.specs.map((s) => Number(s.version.split('.')[1]));
      expect([f.name, [...minors].sort((a, b) => a - b)]).toEqual([f.name, minors]);
    }
  });

  test.each<[string, [string, boolean], [string, boolean]]>([
    // name, [stage, default] at 1.32, at 1.31
    ['SchedulerQueueingHints', ['BETA', true], ['BETA', false]],
    ['JobManagedBy', ['BETA', true], ['ALPHA', false]],
    ['ServiceAccountTokenJTI', ['GA', true], ['BETA', true]],
    ['DynamicResourceAllocation', ['BETA', false], ['ALPHA', false]],
    ['AllowOverwriteTerminationGracePeriodSeconds', ['DEPRECATED', false], ['GA', true]],
  ])('%s: %j at 1.32, %j at 1.31', (name, at132Want, at131Want) => {
    expect([at132.get(name)?.stage, at132.get(name)?.default]).toEqual(at132Want);
    expect([at131.get(name)?.stage, at131.get(name)?.default]).toEqual(at131Want);
  });

  test('gates new in 1.32 do not exist when emulating 1.31', () => {
    expect(at132.has('MutatingAdmissionPolicy')).toBe(true);
    expect(at131.has('MutatingAdmissionPolicy')).toBe(false);
    const g = componentFeatureGates({ emulatedVersion: '1.31' });
    expect(() => g.parse(['MutatingAdmissionPolicy=true'])).toThrow(
      'feature gate MutatingAdmissionPolicy does not exist at emulated version 1.31',
    );
    expect(g.enabled('SchedulerQueueingHints')).toBe(false);
    expect(componentFeatureGates().enabled('SchedulerQueueingHints')).toBe(true);
  });

  test('GA gates are locked, AllAlpha and AllBeta switch the rest', () => {
    const g = componentFeatureGates();
    expect(() => g.parse(['ServiceAccountTokenJTI=false'])).toThrow(
      'cannot set feature gate ServiceAccountTokenJTI to false, feature is locked to true',
    );
    expect(() => g.parse(['AllowServiceLBStatusOnNonLB=true'])).toThrow('locked to false');
    g.parse(['AllAlpha=true,AllBeta=false']);
    expect(g.enabled('WatchList')).toBe(true);
    expect(g.enabled('APIServerIdentity')).toBe(false);
    expect(g.enabled('ServiceAccountTokenJTI')).toBe(true);
  });
});

describe('parseEmulatedVersion', () => {
  test.each<[string[], string | undefined]>([
    [[], undefined],
    [['svc=1.31'], '1.31'],
    [['1.31'], '1.31'],
    [[' svc = 1.31 '], '1.31'],
  ])('%j', (values, want) => {
    expect(parseEmulatedVersion(values)).toBe(want);
  });

  test.each<[string, string]>([
    ['svc=1.30', 'svc=1.30: emulation version 1.30 is not between [1.31] (this binary is 1.32)'],
    ['svc=1.32', 'emulation version 1.32 is not between [1.31]'],
    ['svc=1.31.0', 'svc=1.31.0: the version must be <major>.<minor>'],
    ['svc=x', 'the version must be <major>.<minor>'],
    ['wardle=1.31', 'component not registered: wardle'],
  ])('%s is refused', (value, message) => {
    expect(() => parseEmulatedVersion([value])).toThrow(message);
  });
});
