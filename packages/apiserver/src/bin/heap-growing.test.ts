import { HEAP_GROWING_PERCENT, heapGrowingFlag } from './heap-growing.js';

describe('the API server binary limits heap growth', () => {
  it('sets V8 heap growing percent to 50', () => {
    expect(heapGrowingFlag([])).toBe(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
    expect(HEAP_GROWING_PERCENT).toBe(50);
    expect(heapGrowingFlag(['--max-old-space-size=4096', '--heap-growing-percent-other'])).toBe(
      '--heap-growing-percent=50',
    );
  });

  it.each(['--heap-growing-percent=200', '--heap_growing_percent=10', '--heap-growing-percent'])(
    'leaves a factor given to node alone (%s)',
    (arg) => {
      expect(heapGrowingFlag(['--enable-source-maps', arg])).toBeUndefined();
    },
  );
});
