import { child, index, key, shown } from './paths.js';

it('prints field paths as Kubernetes', () => {
  expect(child('', 'spec')).toBe('spec');
  expect(key(child('openAPIV3Schema', 'properties'), 'spec')).toBe('openAPIV3Schema.properties[spec]');
  expect(index(child('spec', 'items'), 0)).toBe('spec.items[0]');
  expect(shown('')).toBe('<nil>');
  expect(shown('spec')).toBe('spec');
});
