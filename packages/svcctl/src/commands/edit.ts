import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import YAML from 'yaml';
import type { Invocation } from '../invocation.js';
import { Session } from '../session.js';
import { kindPrefix, resourcePath } from '../discovery.js';
import { CliError, describeError } from '../errors.js';
import { objectRefs, type ObjectRef, type RefOptions } from '../object-refs.js';
import { builtinSchema } from '../patch-schema.js';
import { twoWayMergePatch, type JsonObject } from '../three-way-patch.js';
import { toJson, toYaml } from '../printers/json-yaml.js';
import { stripForOutput } from '../objects.js';
import { fieldManagerFor } from '../write-options.js';

export interface EditOptions extends RefOptions {
  output?: string;
  fieldManager?: string;
  subresource?: string;
}

const HEADER = `# Please edit the object below. Lines beginning with a '#' will be ignored,
# and an empty file will abort the edit. If an error occurs while saving this file will be
# reopened with the relevant failures.
#
`;

/** The editor command: `SVC_EDITOR`, `KUBE_EDITOR`, `EDITOR`, else vi. */
function editorOf(env: NodeJS.ProcessEnv): string {
  return env.SVC_EDITOR || env.KUBE_EDITOR || env.EDITOR || 'vi';
}

function runEditor(cmd: string, o: { file: string; env: NodeJS.ProcessEnv; interactive: boolean }): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn('sh', ['-c', `${cmd} "$1"`, 'editor', o.file], {
      env: o.env,
      stdio: o.interactive ? 'inherit' : ['ignore', 'ignore', 'inherit'],
    });
    child.on('error', reject);
    child.on('close', (code) => resolve(code ?? 1));
  });
}

/** `configmaps "name"`: how kubectl names the object in edit's errors. */
function qualified(ref: ObjectRef): string {
  const r = ref.resource;
  return `${r.group ? `${r.resource}.${r.group}` : r.resource} "${ref.name}"`;
}

/** A copy of the edited text that outlives the run, as kubectl keeps one (`svcctl-edit-*.yaml` in the temporary directory). */
async function keepCopy(text: string, json: boolean): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'svcctl-edit-'));
  const copy = join(dir, `edited.${json ? 'json' : 'yaml'}`);
  await writeFile(copy, text);
  return copy;
}

/**
 * `edit`: the objects in `$EDITOR` (YAML, or JSON with `-o json`); what changed is sent as a
 * patch (strategic merge for built-in kinds, JSON merge for others) with the read
 * resourceVersion as precondition. Saving the file unchanged cancels.
 */
export async function run(inv: Invocation<EditOptions>): Promise<void> {
  const { io, opts } = inv;
  const json = opts.output === 'json';
  if (opts.output && !['json', 'yaml'].includes(opts.output)) throw new CliError('the edit mode must be json or yaml');
  const session = Session.open(inv.globals, io);
  const dir = await mkdtemp(join(tmpdir(), 'svcctl-edit-'));
  try {
    const discovery = await session.discovery();
    const refs = await objectRefs(inv.args, { ...opts, session, discovery, io, cli: 'svcctl' });
    for (const ref of refs) {
      const path = resourcePath(ref.resource, {
        namespace: ref.namespace,
        name: ref.name,
        subresource: opts.subresource,
      });
      const original = await session.call<JsonObject>('GET', path);
      const shown = stripForOutput(original as never) as JsonObject;
      const file = join(dir, `${ref.resource.resource}-${ref.name}.${json ? 'json' : 'yaml'}`);
      await writeFile(file, HEADER + (json ? toJson(shown) : toYaml(shown)));
      const code = await runEditor(editorOf(io.env), { file, env: io.env, interactive: io.isTerminal });
      if (code !== 0) throw new CliError(`there was a problem with the editor "${editorOf(io.env)}"`);
      const text = (await readFile(file, 'utf8'))
        .split('\n')
        .filter((l) => !l.startsWith('#'))
        .join('\n');
      if (text.trim() === '') {
        // kubectl reports an emptied file as an invalid edit and keeps a copy of it.
        const copy = await keepCopy(text, json);
        io.err(`error: ${qualified(ref)} is invalid\nA copy of your changes has been stored to "${copy}"\n`);
        throw new CliError('Edit cancelled, no valid changes were saved.');
      }
      let edited: JsonObject;
      try {
        edited = (json ? JSON.parse(text) : YAML.parse(text)) as JsonObject;
      } catch (e) {
        throw new CliError(`error: ${(e as Error).message}\nA copy of your changes has been stored to "${file}"`);
      }
      const schema = await builtinSchema(ref.resource);
      const patch = twoWayMergePatch({ original: shown, modified: edited, schema });
      if (Object.keys(patch).length === 0) {
        io.out('Edit cancelled, no changes made.\n');
        continue;
      }
      const meta = (patch.metadata ?? {}) as JsonObject;
      patch.metadata = {
        ...meta,
        resourceVersion: (original.metadata as JsonObject | undefined)?.resourceVersion ?? null,
      };
      let answer: JsonObject;
      try {
        answer = await session.call<JsonObject>('PATCH', path, {
          body: patch,
          contentType: schema ? 'application/strategic-merge-patch+json' : 'application/merge-patch+json',
          query: { fieldManager: opts.fieldManager ?? fieldManagerFor('edit') },
        });
      } catch (e) {
        const copy = await keepCopy(text, json);
        io.err(`error: ${ref.resource.resource} "${ref.name}" could not be patched: ${describeError(e).text}\n`);
        io.err(`You can run \`svcctl replace -f ${copy}\` to try this update again.\n`);
        inv.fail();
        continue;
      }
      // With -o, kubectl prints the edited object in that format instead of the `edited` line.
      if (opts.output) {
        const shownAnswer = stripForOutput(answer as never) as JsonObject;
        io.out(json ? toJson(shownAnswer) : toYaml(shownAnswer));
      } else io.out(`${kindPrefix(ref.resource)}/${ref.name} edited\n`);
    }
  } finally {
    session.close();
    await rm(dir, { recursive: true, force: true });
  }
}
