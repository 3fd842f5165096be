import { builtinCatalog, group } from '@svc/api';
import { parseFlags, refusal } from './options-testing.js';
import { parseWatchCacheSizes, uncachedPrefixes } from './watch-cache-sizes.js';

// --watch-cache-sizes (Kubernetes' ParseWatchCacheSizes and DefaultWatchCacheSizes): only 0
// means anything (no watch cache for that resource); Events are not cached by default.

describe('--watch-cache-sizes', () => {
  it('parses resource[.group]#size entries, comma separated or repeated', () => {
    expect(
      parseFlags('--watch-cache-sizes=pods#0,deployments.apps#100', '--watch-cache-sizes', 'events#5').watchCacheSizes,
    ).toEqual(
      new Map([
        ['pods', 0],
        ['deployments.apps', 100],
        ['events', 5],
      ]),
    );
    expect(parseFlags().watchCacheSizes).toEqual(new Map());
  });

  it.each([
    ['pods', 'invalid value of watch cache size: pods'],
    ['pods#1#2', 'invalid value of watch cache size: pods#1#2'],
    ['pods#many', 'invalid size of watch cache size: pods#many'],
    ['pods#', 'invalid size of watch cache size: pods#'],
    ['pods#-1', 'watch cache size cannot be negative: pods#-1'],
  ])('refuses %s with exit 2 and Kubernetes’ message', (entry, message) => {
    expect(() => parseWatchCacheSizes([entry])).toThrow(`--watch-cache-sizes: ${message}`);
    const e = refusal([`--watch-cache-sizes=${entry}`]);
    expect(e.exitCode).toBe(2);
    expect(e.message).toContain(message);
  });
});

describe('which resources have no watch cache', () => {
  const catalog = builtinCatalog();
  const off = (...entries: string[]): string[] =>
    [...uncachedPrefixes(catalog, '/registry', parseWatchCacheSizes(entries))].sort();

  it('by default only Events (core and events/v1, one prefix), as Kubernetes', () => {
    expect(off()).toEqual(['/registry/core/events/']);
  });

  it('0 turns a resource off; any other size leaves it on; unknown names are ignored', () => {
    expect(off('pods#0', 'deployments.apps#0', 'secrets#100', 'widgets.example.com#0')).toEqual([
      '/registry/apps/deployments/',
      '/registry/core/events/',
      '/registry/core/pods/',
    ]);
  });

  it('caches Events when either Events resource is set to a size', () => {
    expect(off('events#100')).toEqual([]);
    expect(off(`events.${group('events')}#100`)).toEqual([]);
    expect(off('events#0', `events.${group('events')}#0`)).toEqual(['/registry/core/events/']);
  });
});
