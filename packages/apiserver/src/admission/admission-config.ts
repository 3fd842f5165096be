import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import YAML from 'yaml';
import { group, groupSpellings } from '@svc/api';
import { ConfigurationError } from '../options.js';
import { isAdmissionPluginName, type AdmissionPluginName } from './plugin-names.js';

/** Each plugin's configuration object from `--admission-control-config-file`. */
export type AdmissionPluginConfigs = ReadonlyMap<AdmissionPluginName, unknown>;

/**
 * Reads an AdmissionConfiguration (`apiserver.config.<suffix>/v1`, JSON or YAML): `plugins` is
 * a list of `{name, configuration}` (inline) or `{name, path}` (a file, relative to this one).
 * Anything wrong (unreadable, not an AdmissionConfiguration, an unknown or repeated plugin, a
 * plugin with both or neither) is a `ConfigurationError`: the binary exits 2 with one line.
 */
export function readAdmissionConfig(file: string | undefined): AdmissionPluginConfigs {
  const out = new Map<AdmissionPluginName, unknown>();
  if (file === undefined) return out;
  const fail = (why: string): never => {
    throw new ConfigurationError(`--admission-control-config-file: ${file}: ${why}`);
  };
  const doc = parseFile(file, fail);
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) return fail('not an object');
  const { apiVersion, kind, plugins } = doc as { apiVersion?: unknown; kind?: unknown; plugins?: unknown };
  const versions = groupSpellings(group('apiserver.config')).map((g) => `${g}/v1`);
  if (kind !== 'AdmissionConfiguration' || typeof apiVersion !== 'string' || !versions.includes(apiVersion)) {
    return fail(
      `expected kind AdmissionConfiguration in ${versions.join(' or ')}, got ${String(kind)} in ${String(apiVersion)}`,
    );
  }
  if (plugins === undefined || plugins === null) return out;
  if (!Array.isArray(plugins)) return fail('plugins must be a list');
  plugins.forEach((p: unknown, i) => {
    const at = `plugins[${i}]`;
    if (p === null || typeof p !== 'object') return fail(`${at} must be an object`);
    const { name, path, configuration } = p as { name?: unknown; path?: unknown; configuration?: unknown };
    if (typeof name !== 'string' || !isAdmissionPluginName(name))
      return fail(`${at}.name: unknown admission plugin ${String(name)}`);
    if (out.has(name)) return fail(`${at}.name: ${name} is configured twice`);
    if ((path === undefined) === (configuration === undefined)) {
      return fail(`${at}: exactly one of path and configuration must be set for ${name}`);
    }
    if (path !== undefined) {
      if (typeof path !== 'string' || path === '') return fail(`${at}.path must be a file name`);
      out.set(name, parseFile(isAbsolute(path) ? path : resolve(dirname(file), path), fail));
    } else {
      out.set(name, configuration);
    }
  });
  return out;
}

function parseFile(file: string, fail: (why: string) => never): unknown {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    return fail((e as Error).message);
  }
  try {
    return YAML.parse(text) as unknown;
  } catch (e) {
    return fail(`cannot be parsed: ${(e as Error).message}`);
  }
}
