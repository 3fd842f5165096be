import { FRAME_GENERATION_MS, watchFrame } from './serialization-cache.js';

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
