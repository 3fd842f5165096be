import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ApiObject } from '@svc/api';
import { ResourceClient, collectionPath, watch } from '@svc/client';
import { kubectl, uniqueName, waitFor } from '@svc/testing';
import { withControllerManager, type ClusterEnv } from '../cm-testing.js';
import { R } from '../resources.js';

// With the default --authorization-mode (AlwaysAllow) the API server aggregates nothing itself:
// every rule below was written by the controller.
const env = withControllerManager(['--controllers=clusterrole-aggregation']);
// With RBAC the server aggregates too (in process); both must agree, never rewrite each other.
const rbacEnv = withControllerManager(['--controllers=clusterrole-aggregation'], {
  serverArgs: ['--authorization-mode=RBAC'],
});

interface Rule {
  verbs: string[];
  apiGroups?: string[];
  resources?: string[];
}
const rule = (resource: string, verbs = ['get']): Rule => ({ verbs, apiGroups: [''], resources: [resource] });

describe('clusterrole-aggregation-controller', () => {
  const roles = (e: ClusterEnv = env) => new ResourceClient(e.api, R.clusterRoles());
  const clusterRole = (
    name: string,
    o: { labels?: Record<string, string>; rules?: Rule[]; selectors?: object[] },
  ): ApiObject => ({
    apiVersion: `${R.clusterRoles().group}/v1`,
    kind: 'ClusterRole',
    metadata: { name, ...(o.labels ? { labels: o.labels } : {}) },
    ...(o.selectors ? { aggregationRule: { clusterRoleSelectors: o.selectors } } : {}),
    rules: o.rules ?? [],
  });
  const rulesOf = async (name: string, e: ClusterEnv = env): Promise<Rule[]> =>
    ((await roles(e).get(name)).rules as Rule[] | undefined) ?? [];
  const waitForRules = (name: string, want: Rule[], e: ClusterEnv = env): Promise<boolean> =>
    waitFor(
      `${name} to have rules ${JSON.stringify(want)}`,
      async () => JSON.stringify(await rulesOf(name, e)) === JSON.stringify(want),
      { timeoutMs: 15_000 },
    );

  it("sets the union of the matching roles' rules: deduplicated, by selector then by name, never itself", async () => {
    const key = `example.com/${uniqueName('agg')}`;
    const [a, b] = [`${key}-a`, `${key}-b`];
    await roles().create(
      clusterRole(uniqueName('zz-src'), { labels: { [a]: 'true' }, rules: [rule('pods'), rule('services')] }),
    );
    await roles().create(
      clusterRole(uniqueName('aa-src'), { labels: { [b]: 'true' }, rules: [rule('services'), rule('secrets')] }),
    );
    await roles().create(clusterRole(uniqueName('mm-src'), { labels: { [a]: 'false' }, rules: [rule('nodes')] }));
    const target = uniqueName('target');
    // Labelled like a source: its own rules must not feed back into it.
    await roles().create(
      clusterRole(target, {
        labels: { [a]: 'true' },
        selectors: [{ matchLabels: { [a]: 'true' } }, { matchLabels: { [b]: 'true' } }],
      }),
    );
    await waitForRules(target, [rule('pods'), rule('services'), rule('secrets')]);
    const managers = (await roles().get(target)).metadata.managedFields?.map((m) => m.manager);
    expect(managers).toContain('clusterrole-aggregation-controller');
  });

  it('follows label changes (a role joins, a role leaves) and rule changes of its sources', async () => {
    const key = `example.com/${uniqueName('agg')}`;
    const one = uniqueName('src-1');
    const two = uniqueName('src-2');
    await roles().create(clusterRole(one, { labels: { [key]: 'true' }, rules: [rule('pods')] }));
    await roles().create(clusterRole(two, { rules: [rule('configmaps')] }));
    const target = uniqueName('target');
    await roles().create(clusterRole(target, { selectors: [{ matchLabels: { [key]: 'true' } }] }));
    await waitForRules(target, [rule('pods')]);

    await roles().patch(two, { metadata: { labels: { [key]: 'true' } } }, { type: 'merge' });
    await waitForRules(target, [rule('pods'), rule('configmaps')]);

    await roles().patch(one, { metadata: { labels: { [key]: null } } }, { type: 'merge' });
    await waitForRules(target, [rule('configmaps')]);

    await roles().patch(two, { rules: [rule('configmaps', ['get', 'list']), rule('events')] }, { type: 'merge' });
    await waitForRules(target, [rule('configmaps', ['get', 'list']), rule('events')]);

    await roles().delete(two);
    await waitForRules(target, []);
  });

  it('stock kubectl get clusterrole shows the aggregated rules', async () => {
    const key = `example.com/${uniqueName('agg')}`;
    await roles().create(
      clusterRole(uniqueName('src'), { labels: { [key]: 'true' }, rules: [rule('pods', ['get', 'watch'])] }),
    );
    const target = uniqueName('target');
    await roles().create(clusterRole(target, { selectors: [{ matchLabels: { [key]: 'true' } }] }));
    await waitForRules(target, [rule('pods', ['get', 'watch'])]);
    const home = await mkdtemp(join(tmpdir(), 'svc-agg-kubectl-'));
    try {
      const r = await kubectl(env.server.svcconfigPath, ['get', 'clusterrole', target, '-o', 'json'], {
        home,
        timeoutMs: 60_000,
      });
      expect(r.code).toBe(0);
      const shown = JSON.parse(r.stdout) as { rules: Rule[]; aggregationRule: object };
      expect(shown.rules).toEqual([rule('pods', ['get', 'watch'])]);
      expect(shown.aggregationRule).toEqual({ clusterRoleSelectors: [{ matchLabels: { [key]: 'true' } }] });
      const table = await kubectl(env.server.svcconfigPath, ['get', 'clusterrole', target, '--no-headers'], {
        home,
        timeoutMs: 60_000,
      });
      expect(table.stdout.trim().split(/\s+/)[0]).toBe(target);
    } finally {
      await rm(home, { recursive: true, force: true });
    }
  });

  it("agrees with the API server's own aggregation (RBAC on): the rules are never rewritten to another value", async () => {
    const key = `example.com/${uniqueName('agg')}`;
    const [a, b] = [`${key}-a`, `${key}-b`];
    // Selector order and name order disagree: the two must still compute the same list.
    await roles(rbacEnv).create(clusterRole(uniqueName('zz-src'), { labels: { [a]: 'true' }, rules: [rule('pods')] }));
    await roles(rbacEnv).create(
      clusterRole(uniqueName('aa-src'), { labels: { [b]: 'true' }, rules: [rule('secrets')] }),
    );
    const target = uniqueName('target');
    const want = [rule('pods'), rule('secrets')];
    await roles(rbacEnv).create(
      clusterRole(target, { selectors: [{ matchLabels: { [a]: 'true' } }, { matchLabels: { [b]: 'true' } }] }),
    );
    await waitForRules(target, want, rbacEnv);
    const settled = (await roles(rbacEnv).get(target)).metadata.resourceVersion;
    // Two aggregators that disagree rewrite each other at once, and both look again at every
    // aggregated role on any ClusterRole change: watch `target` from here until a marker role
    // was filled too (the watch is ordered, so every earlier write of `target` has been seen).
    const stop = new AbortController();
    const seen: Rule[][] = [];
    const marker = uniqueName('marker');
    const stream = await watch(rbacEnv.api, collectionPath(R.clusterRoles()), {
      resourceVersion: settled,
      signal: stop.signal,
    });
    await roles(rbacEnv).create(clusterRole(marker, { selectors: [{ matchLabels: { [b]: 'true' } }] }));
    for await (const ev of stream) {
      const o = ev.object as ApiObject;
      if (o.metadata.name === target) seen.push((o.rules as Rule[] | undefined) ?? []);
      if (o.metadata.name === marker && JSON.stringify(o.rules) === JSON.stringify([rule('secrets')])) break;
    }
    stop.abort();
    for (const rules of seen) expect(rules).toEqual(want);
  });
});
