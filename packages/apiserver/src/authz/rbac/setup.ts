import { group, type ResourceType } from '@svc/api';
import type { Logger } from '@svc/component-base';
import type { GenericStore } from '../../registry/store.js';
import { endpointKey, type CreateOnlyHandler } from '../../registry/create-only.js';
import type { ObjectSchema } from '@svc/api';
import {
  localSubjectAccessReview,
  selfSubjectAccessReview,
  selfSubjectRulesReview,
  subjectAccessReview,
  type RuleResolver,
} from '../access-reviews.js';
import {
  alwaysAllow,
  alwaysDeny,
  mastersAuthorizer,
  UnionAuthorizer,
  type Authorizer,
  counting,
  type DecisionRecorder,
} from '../authorizer.js';
import { AbacAuthorizer } from '../abac.js';
import { loadAuthorizationConfigFile, ReloadingAuthorizer } from '../config.js';
import { NodeAuthorizer, NodeGraph } from '../node.js';
import { WebhookAuthorizer } from '../webhook.js';
import { loadWebhookKubeconfig } from '../../webhook/kubeconfig.js';
import { ConfigurationError } from '../../options.js';
import { ClusterRoleAggregator } from './aggregation.js';
import { defaultClusterRoleBindings, defaultClusterRoles } from './bootstrap-policy.js';
import { reconcileBootstrapPolicy } from './bootstrap-roles.js';
import { StoreInformer } from './informer.js';
import { RbacAuthorizer } from './rbac-authorizer.js';
import type { PolicyRule } from './rules.js';

type Lookup = (group: string, version: string, plural: string) => ResourceType | undefined;

/** The authorization flags beyond `--authorization-mode`. */
export interface AuthorizationSettings {
  /** `--authorization-policy-file` (ABAC). */
  policyFile?: string;
  /** `--authorization-webhook-*` (Webhook mode). */
  webhook?: { configFile: string; version: 'v1' | 'v1beta1'; authorizedTtlMs: number; unauthorizedTtlMs: number };
  /** `--authorization-config`; replaces the modes. */
  configFile?: string;
  /** Reload period of `configFile` (60 s). */
  configReloadMs?: number;
  /** Counts decisions per authorizer (`apiserver_authorization_decisions_total`). */
  recordDecision?: DecisionRecorder;
}

export interface Authorization {
  authorizer: Authorizer;
  /** Set when RBAC is among the modes. */
  rbac?: RbacAuthorizer;
  /** Set when Node is among the modes (then the NodeRestriction admission plugin applies). */
  node?: NodeAuthorizer;
  rules: RuleResolver;
  /** Starts the informers and the aggregation controller, reconciles the default policy; resolves when the caches hold it. */
  bootstrap(signal: AbortSignal): Promise<void>;
}

const EVERYTHING: PolicyRule[] = [
  { verbs: ['*'], apiGroups: ['*'], resources: ['*'] },
  { verbs: ['*'], nonResourceURLs: ['*'] },
];

/** The authorizer of `--authorization-mode` (after `system:masters`), and RBAC's caches and controllers when it is listed. */
export function buildAuthorization(
  flagModes: readonly string[],
  deps: {
    lookup: Lookup;
    storeFor: (r: ResourceType) => GenericStore;
    logger: Logger;
    settings?: AuthorizationSettings;
  },
): Authorization {
  const settings = deps.settings ?? {};
  const loaded = settings.configFile ? configOrExit(settings.configFile) : undefined;
  const modes = loaded ? [...new Set(loaded.config.authorizers.map((a) => a.type))] : flagModes;
  const rbacGroup = group('rbac.authorization');
  const storeOf = (plural: string) => (): GenericStore => {
    const r = deps.lookup(rbacGroup, 'v1', plural);
    if (!r) throw new Error(`${plural}.${rbacGroup}/v1 is not served`);
    return deps.storeFor(r);
  };
  const warn =
    (what: string) =>
    (e: unknown): void =>
      deps.logger.warn(what, { error: (e as Error).message });
  let rbac: RbacAuthorizer | undefined;
  if (modes.includes('RBAC')) {
    rbac = new RbacAuthorizer({
      roles: new StoreInformer(storeOf('roles'), warn('RBAC informer (roles) failed; relisting')),
      clusterRoles: new StoreInformer(storeOf('clusterroles'), warn('RBAC informer (clusterroles) failed; relisting')),
      roleBindings: new StoreInformer(storeOf('rolebindings'), warn('RBAC informer (rolebindings) failed; relisting')),
      clusterRoleBindings: new StoreInformer(
        storeOf('clusterrolebindings'),
        warn('RBAC informer (clusterrolebindings) failed; relisting'),
      ),
    });
  }
  let node: NodeAuthorizer | undefined;
  let pods: StoreInformer | undefined;
  if (modes.includes('Node')) {
    pods = new StoreInformer(() => {
      const r = deps.lookup('', 'v1', 'pods');
      if (!r) throw new Error('pods/v1 is not served');
      return deps.storeFor(r);
    }, warn('Node authorizer informer (pods) failed; relisting'));
    node = new NodeAuthorizer(new NodeGraph(pods));
  }
  let reloading: ReloadingAuthorizer | undefined;
  let authorizer: Authorizer;
  if (loaded && settings.configFile) {
    const file = settings.configFile;
    try {
      reloading = new ReloadingAuthorizer({
        file,
        initial: loaded,
        builtin: { Node: node, RBAC: rbac },
        record: settings.recordDecision,
        onReload: (r) => {
          if (r.ok) deps.logger.info('reloaded authorization configuration', { file });
          else
            deps.logger.error('reloading authorization configuration failed; keeping the previous one', {
              file,
              error: r.error,
            });
        },
      });
    } catch (e) {
      throw new ConfigurationError(`--authorization-config: ${(e as Error).message}`);
    }
    authorizer = new UnionAuthorizer([mastersAuthorizer, reloading]);
  } else {
    const byMode = (m: string): Authorizer => {
      switch (m) {
        case 'AlwaysDeny':
          return alwaysDeny;
        case 'RBAC':
          return rbac ?? alwaysDeny;
        case 'Node':
          return node ?? alwaysDeny;
        case 'ABAC':
          return abacOrExit(settings.policyFile);
        case 'Webhook':
          return webhookOrExit(settings.webhook);
        default:
          return alwaysAllow;
      }
    };
    // Authorizers from --authorization-mode are named after their mode, in lower case.
    authorizer = new UnionAuthorizer([
      mastersAuthorizer,
      ...modes.map((m) => counting(byMode(m), { type: m, name: m.toLowerCase(), record: settings.recordDecision })),
    ]);
  }
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
  let started = false;
  const bootstrap = async (signal: AbortSignal): Promise<void> => {
    const crStore = storeOf('clusterroles');
    const crbStore = storeOf('clusterrolebindings');
    if (!started) {
      started = true;
      if (pods) void pods.run(signal);
      reloading?.start(signal, settings.configReloadMs);
    }
    if (pods) await pods.synced;
    if (rbac && !aggregator) {
      aggregator = new ClusterRoleAggregator(
        rbac.informers.clusterRoles,
        crStore(),
        warn('ClusterRole aggregation failed'),
      );
      aggregator.start();
      for (const i of Object.values(rbac.informers)) void i.run(signal);
    }
    if (rbac) {
      await Promise.all(Object.values(rbac.informers).map((i) => i.synced));
    }
    await reconcileBootstrapPolicy({
      clusterRoles: crStore(),
      clusterRoleBindings: crbStore(),
      cached: rbac?.informers,
    });
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

  return { authorizer, rbac, node, rules, bootstrap };
}

function configOrExit(file: string): ReturnType<typeof loadAuthorizationConfigFile> {
  try {
    return loadAuthorizationConfigFile(file);
  } catch (e) {
    throw new ConfigurationError(`--authorization-config: ${(e as Error).message}`);
  }
}

function abacOrExit(file: string | undefined): Authorizer {
  if (!file) throw new ConfigurationError('--authorization-policy-file: required by authorization mode ABAC');
  try {
    return AbacAuthorizer.fromFile(file);
  } catch (e) {
    throw new ConfigurationError(`--authorization-policy-file: ${(e as Error).message}`);
  }
}

function webhookOrExit(w: AuthorizationSettings['webhook']): Authorizer {
  if (!w) throw new ConfigurationError('--authorization-webhook-config-file: required by authorization mode Webhook');
  try {
    // As Kubernetes' legacy webhook flags: failures are no opinion; a 30 s call timeout.
    return new WebhookAuthorizer({
      name: 'webhook',
      connection: loadWebhookKubeconfig(w.configFile),
      version: w.version,
      authorizedTtlMs: w.authorizedTtlMs,
      unauthorizedTtlMs: w.unauthorizedTtlMs,
      timeoutMs: 30_000,
      failurePolicy: 'NoOpinion',
    });
  } catch (e) {
    throw new ConfigurationError(`--authorization-webhook-config-file: ${(e as Error).message}`);
  }
}

/** The create-only handlers of `authorization/v1`'s four reviews. */
export function accessReviewHandlers(
  lookup: Lookup,
  authz: Authorizer,
  rules: RuleResolver,
): Map<string, CreateOnlyHandler> {
  const out = new Map<string, CreateOnlyHandler>();
  const g = group('authorization');
  const add = (plural: string, create: CreateOnlyHandler['create']): void => {
    const r = lookup(g, 'v1', plural);
    if (r)
      out.set(endpointKey(r), {
        kind: { group: r.group, version: r.version, kind: r.kind, schema: r.schema as ObjectSchema },
        create,
      });
  };
  add('subjectaccessreviews', (req) => subjectAccessReview(req.body, authz));
  add('localsubjectaccessreviews', (req) => localSubjectAccessReview(req.body, req.namespace, authz));
  add('selfsubjectaccessreviews', (req) => selfSubjectAccessReview(req.body, req.user, authz));
  add('selfsubjectrulesreviews', async (req) => selfSubjectRulesReview(req.body, req.user, rules));
  return out;
}
