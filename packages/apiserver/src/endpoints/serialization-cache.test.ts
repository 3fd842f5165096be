import { FRAME_GENERATION_MS, listJsonChunks, watchFrame } from './serialization-cache.js';

describe('watch event frames', () => {
  afterEach(() => jest.useRealTimers());

  it('are built once per object and type while the event is recent, then let go', () => {
    jest.useFakeTimers();
    const pod = { kind: 'Pod', metadata: { name: 'a', resourceVersion: '7' } };
    const first = watchFrame('ADDED', pod);
    const body = `{"type":"ADDED","object":${JSON.stringify(pod)}}\n`;
    expect(first.toString()).toBe(`${Buffer.byteLength(body).toString(16)}\r\n${body}\r\n`);
    // Every watcher of the event gets the same Buffer.
    expect(watchFrame('ADDED', pod)).toBe(first);
    // Still kept one generation later (in the previous generation)...
    jest.advanceTimersByTime(FRAME_GENERATION_MS);
    expect(watchFrame('ADDED', pod)).toBe(first);
    // ...and gone after two: a replay from the cache's window builds the same bytes again.
    jest.advanceTimersByTime(FRAME_GENERATION_MS);
    const rebuilt = watchFrame('ADDED', pod);
    expect(rebuilt).not.toBe(first);
    expect(rebuilt.equals(first)).toBe(true);
    // Another type for the same object is another frame.
    expect(watchFrame('DELETED', pod).toString()).toContain('"type":"DELETED"');
  });
});

describe('list JSON in pieces', () => {
  const listOf = (n: number): { items: object[] } & Record<string, unknown> => ({
    kind: 'ConfigMapList',
    apiVersion: 'v1',
    metadata: { resourceVersion: '7' },
    items: Array.from({ length: n }, (_, i) => ({ metadata: { name: `cm-${i}` }, data: { k: 'é"\\n' } })),
  });

  it.each([0, 1, 15, 16, 17, 600])('joins to the JSON of the whole list (%i items)', (n) => {
    const list = listOf(n);
    expect([...listJsonChunks(list)].join('')).toBe(JSON.stringify(list));
  });

  it('keeps each piece to 16 items, so no piece is a long string to flatten', () => {
    const pieces = [...listJsonChunks(listOf(600))];
    // The head, 38 pieces of at most 16 items (the first carries the head), the tail.
    expect(pieces).toHaveLength(Math.ceil(600 / 16) + 1);
    for (const p of pieces) expect(p.split('"name"').length - 1).toBeLessThanOrEqual(16);
  });
});
