import { ControllerExpectations, EXPECTATIONS_TIMEOUT_MS } from './expectations.js';

describe('ControllerExpectations', () => {
  it('is satisfied for unknown keys, and once every expected creation was observed', () => {
    const e = new ControllerExpectations();
    expect(e.satisfied('ns/rs')).toBe(true);
    e.expectCreations('ns/rs', 2);
    expect(e.satisfied('ns/rs')).toBe(false);
    e.creationObserved('ns/rs');
    expect(e.satisfied('ns/rs')).toBe(false);
    e.creationObserved('ns/rs');
    expect(e.satisfied('ns/rs')).toBe(true);
  });

  it('counts each expected deletion once, by pod key, and ignores unexpected ones', () => {
    const e = new ControllerExpectations();
    e.expectDeletions('ns/rs', ['ns/a', 'ns/b']);
    e.deletionObserved('ns/rs', 'ns/a');
    e.deletionObserved('ns/rs', 'ns/a');
    e.deletionObserved('ns/rs', 'ns/other');
    expect(e.satisfied('ns/rs')).toBe(false);
    e.deletionObserved('ns/rs', 'ns/b');
    expect(e.satisfied('ns/rs')).toBe(true);
  });

  it('expires after the timeout, and forgets deleted keys', () => {
    let now = 0;
    const e = new ControllerExpectations(() => now);
    e.expectCreations('ns/rs', 1);
    now = EXPECTATIONS_TIMEOUT_MS;
    expect(e.satisfied('ns/rs')).toBe(false);
    now += 1;
    expect(e.satisfied('ns/rs')).toBe(true);
    e.expectCreations('ns/x', 1);
    e.delete('ns/x');
    expect(e.satisfied('ns/x')).toBe(true);
  });
});
