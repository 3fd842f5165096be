import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import YAML from 'yaml';
import { CommanderError } from 'commander';
import { parseApiServerOptions } from '../options.js';
import { parseAuthorizationConfig, ReloadingAuthorizer, loadAuthorizationConfigFile } from './config.js';
import type { AuthorizationAttributes, Authorizer } from './authorizer.js';
import { waitFor } from '@svc/testing';

const dir = mkdtempSync(join(tmpdir(), 'svc-authz-config-'));
const kubeconfig = join(dir, 'hook.svcconfig');
writeFileSync(
  kubeconfig,
  'apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "http://127.0.0.1:1"}}]\n',
);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const webhook = (o: Record<string, unknown> = {}): Record<string, unknown> => ({
  timeout: '3s',
  subjectAccessReviewVersion: 'v1',
  matchConditionSubjectAccessReviewVersion: 'v1',
  failurePolicy: 'NoOpinion',
  connectionInfo: { type: 'KubeConfigFile', kubeConfigFile: kubeconfig },
  ...o,
});
const doc = (authorizers: unknown[]): string =>
  YAML.stringify({ apiVersion: 'apiserver.config.svc.io/v1beta1', kind: 'AuthorizationConfiguration', authorizers });

describe('parseAuthorizationConfig', () => {
  it('fills the TTL defaults and keeps the order', () => {
    const c = parseAuthorizationConfig(
      doc([
        { type: 'Node', name: 'node' },
        { type: 'Webhook', name: 'hook', webhook: webhook() },
        { type: 'RBAC', name: 'rbac' },
      ]),
    );
    expect(c.authorizers.map((a) => a.type)).toEqual(['Node', 'Webhook', 'RBAC']);
    expect(c.authorizers[1]?.webhook).toMatchObject({
      authorizedTtlMs: 300_000,
      unauthorizedTtlMs: 30_000,
      timeoutMs: 3_000,
      failurePolicy: 'NoOpinion',
    });
  });

  it.each([
    [[], /authorizers: Required value/],
    [[{ type: 'ABAC', name: 'x' }], /authorizers\[0\]\.type: Unsupported value: "ABAC"/],
    [[{ type: 'RBAC' }], /authorizers\[0\]\.name: Required value/],
    [[{ type: 'RBAC', name: 'Not_A_Label' }], /authorizers\[0\]\.name: Invalid value/],
    [
      [
        { type: 'RBAC', name: 'a' },
        { type: 'RBAC', name: 'b' },
      ],
      /authorizers\[1\]\.type: Duplicate value/,
    ],
    [
      [
        { type: 'Webhook', name: 'a', webhook: webhook() },
        { type: 'Webhook', name: 'a', webhook: webhook() },
      ],
      /authorizers\[1\]\.name: Duplicate value/,
    ],
    [[{ type: 'Webhook', name: 'a' }], /authorizers\[0\]\.webhook: Required value/],
    [[{ type: 'RBAC', name: 'a', webhook: webhook() }], /may only be specified when type=Webhook/],
    [[{ type: 'Webhook', name: 'a', webhook: webhook({ timeout: undefined }) }], /webhook\.timeout: Required value/],
    [
      [{ type: 'Webhook', name: 'a', webhook: webhook({ timeout: '31s' }) }],
      /webhook\.timeout: Invalid value: "31s": must be no more than 30s/,
    ],
    [
      [{ type: 'Webhook', name: 'a', webhook: webhook({ subjectAccessReviewVersion: 'v2' }) }],
      /subjectAccessReviewVersion: Unsupported value/,
    ],
    [
      [{ type: 'Webhook', name: 'a', webhook: webhook({ matchConditionSubjectAccessReviewVersion: 'v1beta1' }) }],
      /matchConditionSubjectAccessReviewVersion: Unsupported value/,
    ],
    [
      [{ type: 'Webhook', name: 'a', webhook: webhook({ failurePolicy: 'Allow' }) }],
      /failurePolicy: Unsupported value/,
    ],
    [
      [{ type: 'Webhook', name: 'a', webhook: webhook({ connectionInfo: { type: 'InClusterConfig' } }) }],
      /connectionInfo\.type: Invalid value: "InClusterConfig"/,
    ],
    [
      [{ type: 'Webhook', name: 'a', webhook: webhook({ connectionInfo: { type: 'KubeConfigFile' } }) }],
      /kubeConfigFile: Required value/,
    ],
    [
      [{ type: 'Webhook', name: 'a', webhook: webhook({ matchConditions: [{ expression: 'request.user ==' }] }) }],
      /matchConditions\[0\]\.expression: Invalid value: .*compilation failed/,
    ],
    [
      [
        {
          type: 'Webhook',
          name: 'a',
          webhook: webhook({
            matchConditions: Array.from({ length: 65 }, (_, i) => ({ expression: `request.user != 'u${i}'` })),
          }),
        },
      ],
      /matchConditions: Too many: 65: must have at most 64 items/,
    ],
  ])('rejects invalid config #%#', (authorizers, message) => {
    expect(() => parseAuthorizationConfig(doc(authorizers))).toThrow(message);
  });

  it('accepts 64 match conditions and refuses the wrong apiVersion', () => {
    expect(
      parseAuthorizationConfig(
        doc([
          {
            type: 'Webhook',
            name: 'a',
            webhook: webhook({
              matchConditions: Array.from({ length: 64 }, (_, i) => ({ expression: `request.user != 'u${i}'` })),
            }),
          },
        ]),
      ).authorizers,
    ).toHaveLength(1);
    expect(() =>
      parseAuthorizationConfig(
        YAML.stringify({
          apiVersion: 'apiserver.config.k8s.io/v1beta1',
          kind: 'AuthorizationConfiguration',
          authorizers: [],
        }),
      ),
    ).toThrow(/expected apiVersion apiserver\.config\.svc\.io\/v1beta1/);
  });
});

describe('authorization flags', () => {
  const parse = (args: string[]): unknown => parseApiServerOptions(args, { quiet: true });
  const exit2 = (args: string[], message: RegExp): void => {
    try {
      parse(args);
    } catch (e) {
      expect(e).toBeInstanceOf(CommanderError);
      expect((e as CommanderError).exitCode).toBe(2);
      expect((e as Error).message).toMatch(message);
      return;
    }
    throw new Error(`accepted ${args.join(' ')}`);
  };

  it('refuses --authorization-config with --authorization-mode or --authorization-webhook-*', () => {
    exit2(
      ['--authorization-config=/x.yaml', '--authorization-mode=RBAC'],
      /can not be specified simultaneously with --authorization-mode/,
    );
    exit2(['--authorization-config=/x.yaml', '--authorization-webhook-version=v1'], /--authorization-webhook-\* flags/);
    exit2(
      ['--authorization-config=/x.yaml', '--authorization-webhook-cache-authorized-ttl=1s'],
      /--authorization-webhook-\* flags/,
    );
    exit2(
      ['--authorization-config=/x.yaml', '--feature-gates=StructuredAuthorizationConfiguration=false'],
      /feature gate/,
    );
    expect(parse(['--authorization-config=/x.yaml'])).toMatchObject({
      authorizationMode: [],
      authorizationConfig: '/x.yaml',
    });
  });

  it('pairs ABAC with its policy file and Webhook with its config file', () => {
    exit2(['--authorization-mode=ABAC'], /--authorization-policy-file: required by authorization mode ABAC/);
    exit2(['--authorization-policy-file=/p'], /only used with authorization mode ABAC/);
    exit2(['--authorization-mode=Webhook'], /--authorization-webhook-config-file: required/);
    exit2(
      ['--authorization-mode=Node', '--authorization-webhook-config-file=/k'],
      /only used with authorization mode Webhook/,
    );
    expect(() =>
      parse([
        '--authorization-mode=Webhook',
        '--authorization-webhook-config-file=/k',
        '--authorization-webhook-version=v2',
      ]),
    ).toThrow(/v2/);
    expect(parse(['--authorization-mode=Node,Webhook,RBAC', '--authorization-webhook-config-file=/k'])).toMatchObject({
      authorizationMode: ['Node', 'Webhook', 'RBAC'],
      authorizationWebhookVersion: 'v1beta1',
      authorizationWebhookCacheAuthorizedTtlMs: 300_000,
      authorizationWebhookCacheUnauthorizedTtlMs: 30_000,
    });
  });
});

describe('ReloadingAuthorizer', () => {
  const allow: Authorizer = { authorize: async () => ({ decision: 'allow' }) };
  const deny: Authorizer = { authorize: async () => ({ decision: 'deny' }) };
  const attrs = {
    user: { name: 'u', groups: [] },
    isResourceRequest: false,
    path: '/x',
    verb: 'get',
  } as unknown as AuthorizationAttributes;

  it('replaces the chain on a valid change, keeps it (and reports) on an invalid one', async () => {
    const file = join(dir, 'reload.yaml');
    writeFileSync(file, doc([{ type: 'RBAC', name: 'rbac' }]));
    const outcomes: Array<{ ok: boolean }> = [];
    const z = new ReloadingAuthorizer({
      file,
      initial: loadAuthorizationConfigFile(file),
      builtin: { RBAC: allow, Node: deny },
      onReload: (o) => outcomes.push(o),
    });
    expect((await z.authorize(attrs)).decision).toBe('allow');
    z.reload();
    expect(outcomes).toEqual([]);
    writeFileSync(
      file,
      doc([
        { type: 'Node', name: 'node' },
        { type: 'RBAC', name: 'rbac' },
      ]),
    );
    z.reload();
    expect(outcomes).toEqual([{ ok: true }]);
    expect((await z.authorize(attrs)).decision).toBe('deny');
    writeFileSync(file, doc([{ type: 'RBAC', name: 'Bad_Name' }]));
    z.reload();
    expect(outcomes[1]).toMatchObject({
      ok: false,
      error: expect.stringMatching(/authorizers\[0\]\.name: Invalid value/),
    });
    expect((await z.authorize(attrs)).decision).toBe('deny');
  });

  it('refuses a reload that adds an authorizer type not built at start', async () => {
    const file = join(dir, 'reload2.yaml');
    writeFileSync(file, doc([{ type: 'RBAC', name: 'rbac' }]));
    const outcomes: Array<{ ok: boolean; error?: string }> = [];
    const z = new ReloadingAuthorizer({
      file,
      initial: loadAuthorizationConfigFile(file),
      builtin: { RBAC: allow },
      onReload: (o) => outcomes.push(o),
    });
    writeFileSync(file, doc([{ type: 'Node', name: 'node' }]));
    z.reload();
    expect(outcomes[0]?.error).toMatch(/Node was not configured at start/);
    expect((await z.authorize(attrs)).decision).toBe('allow');
  });

  it('reloads by itself when the file changes and on its schedule', async () => {
    const file = join(dir, 'reload3.yaml');
    writeFileSync(file, doc([{ type: 'RBAC', name: 'rbac' }]));
    const outcomes: Array<{ ok: boolean }> = [];
    const z = new ReloadingAuthorizer({
      file,
      initial: loadAuthorizationConfigFile(file),
      builtin: { RBAC: allow, Node: deny },
      onReload: (o) => outcomes.push(o),
    });
    const stop = new AbortController();
    z.start(stop.signal, 100);
    try {
      writeFileSync(file, doc([{ type: 'Node', name: 'node' }]));
      await waitFor('the changed file to be taken', () => outcomes.length === 1);
      expect((await z.authorize(attrs)).decision).toBe('deny');
    } finally {
      stop.abort();
    }
  });
});
