import { mountedArgv, mountNamespaceUnavailable } from './container-mounts.js';

describe('container mounts', () => {
  it('refuses, with the reason, to run a container with mounts when svc-runtime is not root', () => {
    const getuid = jest.spyOn(process, 'getuid').mockReturnValue(1000);
    try {
      expect(mountNamespaceUnavailable()).toMatch(
        /^svc-runtime runs as uid 1000, not root: it cannot bind-mount volumes/,
      );
    } finally {
      getuid.mockRestore();
    }
  });

  it('binds parents before children, read-only ones remounted, then execs the command in the working directory', () => {
    const argv = mountedArgv({
      mounts: [
        {
          containerPath: '/etc/config/sub/',
          hostPath: '/v/b',
          readonly: true,
          selinuxRelabel: false,
          propagation: 'PROPAGATION_PRIVATE',
        },
        {
          containerPath: '/etc/config',
          hostPath: '/v/a',
          readonly: false,
          selinuxRelabel: false,
          propagation: 'PROPAGATION_PRIVATE',
        },
      ],
      argv: ['sleep', '60'],
      cwd: '/work',
      readyFile: '/c/mounted',
    });
    expect(argv.slice(1, 5)).toEqual(['--mount', '--propagation', 'private', '--']);
    expect(argv.slice(argv.indexOf('sh') + 1)).toEqual([
      '/work',
      '/c/mounted',
      '/v/a',
      '/etc/config',
      'rw',
      '/v/b',
      '/etc/config/sub',
      'ro',
      '--',
      'sleep',
      '60',
    ]);
  });
});
