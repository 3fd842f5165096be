import { CommanderError } from 'commander';
import { criTarget } from './cri-client.js';
import { parseRuntimeOptions } from './options.js';

describe('parseRuntimeOptions', () => {
  it('has defaults', () => {
    expect(parseRuntimeOptions([])).toEqual({
      socket: '/run/svc-runtime/svc-runtime.sock',
      rootDir: '/var/lib/svc-runtime',
      podIp: '127.0.0.1',
      loggingFormat: 'text',
      verbosity: 0,
    });
  });

  it('reads every flag', () => {
    expect(
      parseRuntimeOptions([
        '--socket',
        '/tmp/s.sock',
        '--root-dir=/tmp/r',
        '--pod-ip',
        '10.0.0.5',
        '--logging-format',
        'json',
        '-v',
        '4',
      ]),
    ).toEqual({ socket: '/tmp/s.sock', rootDir: '/tmp/r', podIp: '10.0.0.5', loggingFormat: 'json', verbosity: 4 });
  });

  it.each([
    [['--pod-ip', 'node-1'], /--pod-ip: "node-1" is not an IP address/],
    [['--logging-format', 'xml'], /logging-format/],
    [['-v', 'x'], /invalid syntax/],
    [['--nope'], /unknown option/],
    [['extra'], /too many arguments/],
  ])('rejects %j', (argv, message) => {
    let err: unknown;
    try {
      parseRuntimeOptions(argv, { quiet: true });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(CommanderError);
    expect((err as Error).message).toMatch(message);
  });
});

describe('criTarget', () => {
  it('takes unix:// endpoints and socket paths', () => {
    expect(criTarget('unix:///run/x.sock')).toBe('unix:///run/x.sock');
    expect(criTarget('/run/x.sock')).toBe('unix:///run/x.sock');
    expect(criTarget('x.sock')).toBe(`unix://${process.cwd()}/x.sock`);
  });

  it('refuses other schemes', () => {
    expect(() => criTarget('tcp://127.0.0.1:1234')).toThrow(/only unix:\/\//);
    expect(() => criTarget('')).toThrow(/empty/);
  });
});
