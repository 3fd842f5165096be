import type { Invocation } from '../invocation.js';
import { Session } from '../session.js';
import { resourcePath, type Discovery } from '../discovery.js';
import { CliError, statusOf } from '../errors.js';
import { readFileSync } from 'node:fs';
import { parseOutputFormat } from '../printers/output-format.js';
import { ResultPrinter } from '../printers/results.js';
import { tabwrite } from '../printers/tabwriter.js';
import { goEscape, sortKeys } from '../printers/json-yaml.js';
import type { ApiObjectJson } from '../objects.js';
import {
  breakdownRule,
  combineResourceGroup,
  compactRules,
  goList,
  ruleString,
  type PolicyRule,
} from '../rbac/policy-rules.js';

const RESOURCE_VERBS = [
  'get',
  'list',
  'watch',
  'create',
  'update',
  'patch',
  'delete',
  'deletecollection',
  'use',
  'bind',
  'impersonate',
  '*',
  'approve',
  'sign',
  'escalate',
  'attest',
];
const NON_RESOURCE_VERBS = ['get', 'put', 'post', 'head', 'options', 'delete', 'patch', '*'];
const NON_STANDARD_RESOURCES = ['users', 'groups'];

/** POSTs a review to a built-in group of the server (`authentication`, `authorization`) and returns the answer. */
async function review<T>(
  session: Session,
  o: { discovery: Discovery; group: string; resource: string; body: object },
): Promise<T> {
  const group = o.discovery.group(o.group);
  const r = o.discovery.builtin({ group, resource: o.resource });
  return session.call<T>('POST', resourcePath(r), {
    body: { apiVersion: `${group}/${r.version}`, kind: r.kind, ...o.body },
  });
}

/** kubectl's list for `auth whoami -o` (the Go-template formats among them are refused when used). */
const WHOAMI_FORMATS = [
  'go-template',
  'go-template-file',
  'json',
  'jsonpath',
  'jsonpath-as-json',
  'jsonpath-file',
  'name',
  'template',
  'templatefile',
  'yaml',
];

export interface WhoamiOptions {
  output?: string;
}

interface UserInfo {
  username?: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

/** A SelfSubjectReview with its keys in the order of Kubernetes' Go types (omitempty fields left out). */
function typedReview(r: ApiObjectJson & { status?: { userInfo?: UserInfo } }): unknown {
  const ui = r.status?.userInfo ?? {};
  const userInfo: UserInfo = {};
  if (ui.username) userInfo.username = ui.username;
  if (ui.uid) userInfo.uid = ui.uid;
  if (ui.groups?.length) userInfo.groups = ui.groups;
  if (ui.extra && Object.keys(ui.extra).length) userInfo.extra = sortKeys(ui.extra) as Record<string, string[]>;
  const { creationTimestamp = null, ...meta } = r.metadata ?? {};
  return { kind: r.kind, apiVersion: r.apiVersion, metadata: { creationTimestamp, ...meta }, status: { userInfo } };
}

/** `auth whoami`: a SelfSubjectReview, printed as kubectl's ATTRIBUTE/VALUE table (or -o json|yaml). */
export async function runWhoami(inv: Invocation<WhoamiOptions>): Promise<void> {
  const { io, opts } = inv;
  const format = opts.output
    ? parseOutputFormat(opts.output, { allowed: WHOAMI_FORMATS, readFile: (p) => readFileSync(p, 'utf8') })
    : undefined;
  const session = Session.open(inv.globals, io);
  try {
    const discovery = await session.discovery();
    let answer: ApiObjectJson & { status?: { userInfo?: UserInfo } };
    try {
      answer = await review(session, { discovery, group: 'authentication', resource: 'selfsubjectreviews', body: {} });
    } catch (e) {
      const reason = statusOf(e)?.reason;
      if (reason === 'Forbidden') {
        throw new CliError(
          'the selfsubjectreviews API is not enabled in the cluster or you do not have permission to call it',
        );
      }
      if (reason === 'NotFound' || (e instanceof CliError && e.message.includes("doesn't have a resource type"))) {
        throw new CliError('the selfsubjectreviews API is not enabled in the cluster');
      }
      throw e;
    }
    if (format?.kind === 'json') {
      // kubectl prints the typed review: fields in the order of Go's structs, not sorted.
      io.out(`${goEscape(JSON.stringify(typedReview(answer), null, 4))}\n`);
      return;
    }
    if (format) {
      new ResultPrinter(io, { format }).print(answer, {
        resource: discovery.builtin({ group: discovery.group('authentication'), resource: 'selfsubjectreviews' }),
        verb: '',
      });
      return;
    }
    const ui = answer.status?.userInfo ?? {};
    const lines = ['ATTRIBUTE\tVALUE'];
    if (ui.username) lines.push(`Username\t${ui.username}`);
    if (ui.uid) lines.push(`UID\t${ui.uid}`);
    if (ui.groups?.length) lines.push(`Groups\t${goList(ui.groups)}`);
    for (const k of Object.keys(ui.extra ?? {}).sort()) lines.push(`Extra: ${k}\t${goList(ui.extra?.[k])}`);
    io.out(tabwrite(lines.map((l) => `${l}\n`).join('')));
  } finally {
    session.close();
  }
}

export interface CanIOptions {
  allNamespaces?: boolean;
  list?: boolean;
  quiet?: boolean;
  subresource?: string;
  headers?: boolean;
}

/**
 * `auth can-i VERB RESOURCE[/NAME]` (or a non-resource URL): a SelfSubjectAccessReview; prints
 * yes or no (exit 1); `--list` prints the rules of a SelfSubjectRulesReview as kubectl does.
 */
export async function runCanI(inv: Invocation<CanIOptions>): Promise<void> {
  const { io, opts, args } = inv;
  // kubectl's warnings end in a newline of their own, and its printer adds one.
  const warn = (s: string): void => io.err(`Warning: ${s}\n`);
  if (opts.list) {
    if (args.length !== 0) throw new CliError('list option must be specified with no arguments');
    if (opts.quiet || opts.allNamespaces || opts.subresource) {
      throw new CliError("list option can't be specified with neither quiet, all-namespaces nor subresource options");
    }
  } else if (args.length !== 2) {
    throw new CliError(
      `you must specify two arguments: verb resource or verb resource/resourceName.\nSee 'svcctl auth can-i -h' for help and examples.`,
    );
  } else if (opts.headers === false) {
    throw new CliError('--no-headers cannot be set without --list specified');
  }
  const session = Session.open(inv.globals, io);
  try {
    const discovery = await session.discovery();
    const namespace = opts.allNamespaces ? '' : session.namespace;
    if (opts.list) {
      const answer = await review<{
        status?: {
          resourceRules?: PolicyRule[];
          nonResourceRules?: PolicyRule[];
          incomplete?: boolean;
          evaluationError?: string;
        };
      }>(session, {
        discovery,
        group: 'authorization',
        resource: 'selfsubjectrulesreviews',
        body: { spec: { namespace } },
      });
      const st = answer.status ?? {};
      if (st.incomplete) warn(`the list may be incomplete: ${st.evaluationError ?? ''}`);
      const rules: PolicyRule[] = [
        ...(st.resourceRules ?? []).map((r) => ({
          verbs: r.verbs,
          apiGroups: r.apiGroups,
          resources: r.resources,
          resourceNames: r.resourceNames,
        })),
        ...(st.nonResourceRules ?? []).map((r) => ({ verbs: r.verbs, nonResourceURLs: r.nonResourceURLs })),
      ];
      const compact = compactRules(rules.flatMap(breakdownRule));
      const keyed = compact.map((r) => ({ r, k: ruleString(r) }));
      keyed.sort((a, b) => (a.k < b.k ? -1 : a.k > b.k ? 1 : 0));
      const lines = opts.headers === false ? [] : ['Resources\tNon-Resource URLs\tResource Names\tVerbs'];
      for (const { r } of keyed) {
        lines.push(
          `${combineResourceGroup(r.resources, r.apiGroups)}\t${goList(r.nonResourceURLs)}\t${goList(r.resourceNames)}\t${goList(r.verbs)}`,
        );
      }
      io.out(tabwrite(lines.map((l) => `${l}\n`).join('')));
      return;
    }
    const [verb = '', target = ''] = args;
    let spec: Record<string, unknown>;
    if (target.startsWith('/')) {
      if (opts.subresource) throw new CliError('--subresource can not be used with NonResourceURL');
      if (!NON_RESOURCE_VERBS.includes(verb)) warn(`verb '${verb}' is not a known verb\n`);
      spec = { nonResourceAttributes: { verb, path: target } };
    } else {
      const [type = '', name] = target.split(/\/(.*)/s, 2);
      let group = '';
      let resource = type;
      if (type !== '*') {
        const hit = discovery.find(type);
        if (hit) {
          group = hit.group;
          resource = hit.resource;
          if (!hit.namespaced && !opts.allNamespaces) {
            warn(
              group
                ? `resource '${resource}' is not namespace scoped in group '${group}'\n`
                : `resource '${resource}' is not namespace scoped\n`,
            );
          }
        } else {
          const dot = type.indexOf('.');
          const g = dot >= 0 ? type.slice(dot + 1) : '';
          const res = dot >= 0 ? type.slice(0, dot) : type;
          if (!NON_STANDARD_RESOURCES.includes(type.toLowerCase())) {
            warn(
              g
                ? `the server doesn't have a resource type '${res}' in group '${g}'\n`
                : `the server doesn't have a resource type '${res}'\n`,
            );
          }
        }
      }
      if (!RESOURCE_VERBS.includes(verb)) warn(`verb '${verb}' is not a known verb\n`);
      spec = {
        resourceAttributes: {
          namespace,
          verb,
          group,
          resource,
          subresource: opts.subresource,
          name: name ?? undefined,
        },
      };
    }
    const answer = await review<{ status?: { allowed?: boolean; reason?: string; evaluationError?: string } }>(
      session,
      {
        discovery,
        group: 'authorization',
        resource: 'selfsubjectaccessreviews',
        body: { spec },
      },
    );
    const st = answer.status ?? {};
    if (!opts.quiet) {
      if (st.allowed) io.out('yes\n');
      else io.out(`no${st.reason ? ` - ${st.reason}` : ''}${st.evaluationError ? ` - ${st.evaluationError}` : ''}\n`);
    }
    if (!st.allowed) inv.fail();
  } finally {
    session.close();
  }
}
