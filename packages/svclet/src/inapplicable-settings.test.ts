// The node agent settings this platform cannot apply are reported once at start, with values.
import { createLogger } from '@svc/component-base';
import { defaultConfiguration } from './configuration.js';
import { reportInapplicableSettings } from './inapplicable-settings.js';

describe('reportInapplicableSettings', () => {
  it('logs each group of settings with no effect here once, with its values', () => {
    const lines: string[] = [];
    const config = { ...defaultConfiguration(), hairpinMode: 'hairpin-veth', cgroupDriver: 'systemd' };
    reportInapplicableSettings(config, createLogger({ format: 'json', write: (l) => lines.push(l) }));
    const entries = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(entries).toHaveLength(5);
    for (const e of entries) expect(e.msg).toMatch(/^settings with no effect on this platform: /);
    const all = Object.assign({}, ...entries) as Record<string, unknown>;
    expect(all).toMatchObject({
      hairpinMode: '"hairpin-veth"',
      cgroupDriver: '"systemd"',
      makeIPTablesUtilChains: 'true',
    });
    for (const key of [
      'cpuCFSQuota',
      'clusterDNS',
      'imageGCHighThresholdPercent',
      'eventRecordQPS',
      'containerLogMaxFiles',
    ])
      expect(all[key]).not.toBeUndefined();
  });
});
