import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { svcctl } from '../svcctl-testing.js';

/** Completes `words` (the last one being typed) with the bash script svcctl prints. */
async function complete(script: string, words: string[]): Promise<string> {
  const body = `source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$((\${#COMP_WORDS[@]} - 1)); _svcctl; echo "\${COMPREPLY[*]}"`;
  return new Promise((resolve, reject) =>
    execFile('bash', ['-c', body, 'bash', script, ...words], (e, out) => (e ? reject(e) : resolve(out.trim()))),
  );
}

describe('svcctl completion', () => {
  let dir: string;
  let script: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'svcctl-completion-'));
    script = join(dir, 'svcctl.bash');
    const r = await svcctl(['completion', 'bash']);
    expect(r.code).toBe(0);
    await writeFile(script, r.stdout);
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('completes commands, sub-commands and flags in bash', async () => {
    expect(await complete(script, ['svcctl', 'ro'])).toBe('rollout');
    expect((await complete(script, ['svcctl', 'rollout', ''])).split(' ')).toEqual(
      expect.arrayContaining(['status', 'history', 'undo', 'restart', 'pause', 'resume']),
    );
    expect(await complete(script, ['svcctl', '-n', 'default', 'auth', 'c'])).toBe('can-i');
    expect(await complete(script, ['svcctl', 'get', '--show-l'])).toBe('--show-labels');
    expect(await complete(script, ['svcctl', 'auth', 'can-i', '--li'])).toBe('--list');
    expect(await complete(script, ['svcctl', 'get', '--svcc'])).toBe('--svcconfig');
  });

  it('prints zsh through bashcompinit and refuses other shells', async () => {
    const zsh = await svcctl(['completion', 'zsh']);
    expect(zsh.stdout).toMatch(/^autoload -U \+X bashcompinit && bashcompinit\n/);
    expect(zsh.stdout).toContain('complete -F _svcctl svcctl');
    expect(await svcctl(['completion', 'fish'])).toEqual({
      code: 1,
      stdout: '',
      stderr: 'error: Unsupported shell type "fish".\n',
    });
    expect((await svcctl(['completion'])).code).toBe(1);
  });
});
