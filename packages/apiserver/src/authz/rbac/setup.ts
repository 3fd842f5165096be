import { group, type ResourceType } from '@svc/api';
import type { Logger } from '../../logger.js';
import type { GenericStore } from '../../registry/store.js';
import { createOnlyKey, type CreateOnlyHandler } from '../../endpoints/create-only.js';
import type { ObjectSchema } from '@svc/api';
import {
  localSubjectAccessReview, selfSubjectAccessReview, selfSubjectRulesReview, subjectAccessReview, type RuleResolver,
} from '../access-reviews.js';
import { alwaysAllow, alwaysDeny, mastersAuthorizer, UnionAuthorizer, type Authorizer } from '../authorizer.js';
import { ClusterRoleAggregator } from './aggregation.js';
import { defaultClusterRoleBindings, defaultClusterRoles } from './bootstrap-policy.js';
import { reconcileBootstrapPolicy } from './bootstrap-roles.js';
import { StoreInformer } from './informer.js';
import { RbacAuthorizer } from './rbac-authorizer.js';
import type { PolicyRule } from './rules.js';

type Lookup = (group: string, version: string, plural: string) => ResourceType | undefined;

export interface Authorization {
  authorizer: Authorizer;
  /** Set when RBAC is among the modes. */
  rbac?: RbacAuthorizer;
  rules: RuleResolver;
  /** Starts the informers and the aggregation controller, reconciles the default policy; resolves when the caches hold it. */
  bootstrap(signal: AbortSignal): Promise<void>;
}

const EVERYTHING: PolicyRule[] = [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }, { verbs: ['*'], nonResourceURLs: ['*'] }];

/** The authorizer of `--authorization-mode` (after `system:masters`), and RBAC's caches and controllers when it is listed. */
export function buildAuthorization(modes: readonly string[], deps: { lookup: Lookup; storeFor: (r: ResourceType) => GenericStore; logger: Logger }): Authorization {
  const rbacGroup = group('rbac.authorization');
  const storeOf = (plural: string) => (): GenericStore => {
    const r = deps.lookup(rbacGroup, 'v1', plural);
    if (!r) throw new Error(`${plural}.${rbacGroup}/v1 is not served`);
    return deps.storeFor(r);
  };
  const warn = (what: string) => (e: unknown): void => deps.logger.warn(what, { error: (e as Error).message });
  let rbac: RbacAuthorizer | undefined;
  if (modes.includes('RBAC')) {
    rbac = new RbacAuthorizer({
      roles: new StoreInformer(storeOf('roles'), warn('RBAC informer (roles) failed; relisting')),
      clusterRoles: new StoreInformer(storeOf('clusterroles'), warn('RBAC informer (clusterroles) failed; relisting')),
      roleBindings: new StoreInformer(storeOf('rolebindings'), warn('RBAC informer (rolebindings) failed; relisting')),
      clusterRoleBindings: new StoreInformer(storeOf('clusterrolebindings'), warn('RBAC informer (clusterrolebindings) failed; relisting')),
    });
  }
  const byMode = (m: string): Authorizer => (m === 'AlwaysDeny' ? alwaysDeny : m === 'RBAC' && rbac ? rbac : alwaysAllow);
  const authorizer = new UnionAuthorizer([mastersAuthorizer, ...modes.map(byMode)]);
  const rules: RuleResolver = {
    rulesFor: (user, namespace) => {
      const out: PolicyRule[] = [];
      const errors: string[] = [];
      for (const m of modes) {
        if (m === 'AlwaysAllow') out.push(...EVERYTHING);
        else if (m === 'RBAC' && rbac) {
          const r = rbac.rulesFor(user, namespace);
          out.push(...r.rules);
          errors.push(...r.errors);
        }
      }
      return { rules: out, incomplete: errors.length > 0, errors };
    },
  };

  // Informers and the aggregator start once, however often a failed bootstrap is retried.
  let aggregator: ClusterRoleAggregator | undefined;
  const bootstrap = async (signal: AbortSignal): Promise<void> => {
    const crStore = storeOf('clusterroles');
    const crbStore = storeOf('clusterrolebindings');
    if (rbac && !aggregator) {
      aggregator = new ClusterRoleAggregator(rbac.informers.clusterRoles, crStore(), warn('ClusterRole aggregation failed'));
      aggregator.start();
      for (const i of Object.values(rbac.informers)) void i.run(signal);
    }
    if (rbac) {
      await Promise.all(Object.values(rbac.informers).map((i) => i.synced));
    }
    await reconcileBootstrapPolicy({ clusterRoles: crStore(), clusterRoleBindings: crbStore() });
    if (!rbac || !aggregator) return;
    const agg = aggregator;
    // Serve only once the caches hold the defaults, aggregated roles filled.
    const { clusterRoles, clusterRoleBindings } = rbac.informers;
    const ready = (): boolean =>
      defaultClusterRoles().every((o) => {
        const c = clusterRoles.get('', o.metadata.name ?? '');
        return !!c && (!c.aggregationRule || ((c.rules as unknown[] | undefined) ?? []).length > 0);
      }) && defaultClusterRoleBindings().every((o) => !!clusterRoleBindings.get('', o.metadata.name ?? ''));
    for (let i = 0; !ready() && !signal.aborted && i < 600; i++) {
      if (i % 20 === 0) agg.kick();
      await new Promise((r) => setTimeout(r, 25));
    }
  };

  return { authorizer, rbac, rules, bootstrap };
}

/** The create-only handlers of `authorization/v1`'s four reviews. */
export function accessReviewHandlers(lookup: Lookup, authz: Authorizer, rules: RuleResolver): Map<string, CreateOnlyHandler> {
  const out = new Map<string, CreateOnlyHandler>();
  const g = group('authorization');
  const add = (plural: string, create: CreateOnlyHandler['create']): void => {
    const r = lookup(g, 'v1', plural);
    if (r) out.set(createOnlyKey(r), { kind: { group: r.group, version: r.version, kind: r.kind, schema: r.schema as ObjectSchema }, create });
  };
  add('subjectaccessreviews', (req) => subjectAccessReview(req.body, authz));
  add('localsubjectaccessreviews', (req) => localSubjectAccessReview(req.body, req.namespace, authz));
  add('selfsubjectaccessreviews', (req) => selfSubjectAccessReview(req.body, req.user, authz));
  add('selfsubjectrulesreviews', async (req) => selfSubjectRulesReview(req.body, req.user, rules));
  return out;
}
