import { group, legacyTokenTrackingConfigMap, naming, type ApiObject } from '@svc/api';
import type { PolicyRule } from './rules.js';

// The default ClusterRoles and ClusterRoleBindings (spec: RBAC, defaults 7-9), after
// Kubernetes' bootstrappolicy, with the product's component names.

const READ = ['get', 'list', 'watch'];
const WRITE = ['create', 'delete', 'deletecollection', 'patch', 'update'];
const RW = [...READ, ...WRITE];

function rule(verbs: string[], apiGroups: string[], resources: string[]): PolicyRule {
  return { verbs, apiGroups, resources };
}
/** `r` limited to the objects named. */
const named = (r: PolicyRule, resourceNames: string[]): PolicyRule => ({ ...r, resourceNames });
const urls = (verbs: string[], nonResourceURLs: string[]): PolicyRule => ({ verbs, nonResourceURLs });

export const autoupdateAnnotation = (): string => `${group('rbac.authorization')}/autoupdate`;
export const bootstrappingLabel = (): string => `${naming().labelPrefix}/bootstrapping`;
export const aggregateLabel = (to: 'admin' | 'edit' | 'view'): string =>
  `${group('rbac.authorization')}/aggregate-to-${to}`;

function meta(name: string, labels: Record<string, string> = {}): ApiObject['metadata'] {
  return {
    name,
    labels: { [bootstrappingLabel()]: 'rbac-defaults', ...labels },
    annotations: { [autoupdateAnnotation()]: 'true' },
  };
}

function clusterRole(name: string, rules: PolicyRule[], labels: Record<string, string> = {}): ApiObject {
  return { apiVersion: `${group('rbac.authorization')}/v1`, kind: 'ClusterRole', metadata: meta(name, labels), rules };
}

function aggregated(name: string, to: 'admin' | 'edit' | 'view', labels: Record<string, string> = {}): ApiObject {
  return {
    apiVersion: `${group('rbac.authorization')}/v1`,
    kind: 'ClusterRole',
    metadata: meta(name, labels),
    rules: [],
    aggregationRule: { clusterRoleSelectors: [{ matchLabels: { [aggregateLabel(to)]: 'true' } }] },
  };
}

type SubjectSpec =
  { kind: 'User' | 'Group'; name: string } | { kind: 'ServiceAccount'; name: string; namespace: string };

function binding(name: string, role: string, subjects: SubjectSpec[]): ApiObject {
  const rbac = group('rbac.authorization');
  return {
    apiVersion: `${rbac}/v1`,
    kind: 'ClusterRoleBinding',
    metadata: meta(name),
    roleRef: { apiGroup: rbac, kind: 'ClusterRole', name: role },
    subjects: subjects.map((s) =>
      s.kind === 'ServiceAccount'
        ? { kind: s.kind, name: s.name, namespace: s.namespace }
        : { kind: s.kind, apiGroup: rbac, name: s.name },
    ),
  };
}

/** Per built-in controller: `system:controller:<name>`, bound to the service account `<name>` in the system namespace. */
function controllerRoles(): Array<{ name: string; rules: PolicyRule[] }> {
  const apps = 'apps';
  const events = rule(['create', 'patch', 'update'], ['', group('events')], ['events']);
  const certificates = group('certificates');
  const signers = naming().signerNames;
  return [
    {
      name: 'namespace-controller',
      rules: [
        rule(['get', 'list', 'watch', 'delete'], [''], ['namespaces']),
        rule(['update'], [''], ['namespaces/finalize', 'namespaces/status']),
        rule(['get', 'list', 'delete', 'deletecollection'], ['*'], ['*']),
      ],
    },
    { name: 'service-account-controller', rules: [rule(['create'], [''], ['serviceaccounts']), events] },
    {
      name: 'serviceaccount-token-controller',
      rules: [
        rule(['get', 'list', 'watch', 'create', 'update', 'delete'], [''], ['secrets']),
        rule(READ, [''], ['serviceaccounts']),
        events,
      ],
    },
    {
      name: 'replicaset-controller',
      rules: [
        rule(['get', 'list', 'watch', 'update'], [apps], ['replicasets']),
        rule(['update'], [apps], ['replicasets/status', 'replicasets/finalizers']),
        rule(['list', 'watch', 'patch', 'create', 'delete'], [''], ['pods']),
        events,
      ],
    },
    {
      name: 'replication-controller',
      rules: [
        rule(['get', 'list', 'watch', 'update'], [''], ['replicationcontrollers']),
        rule(['update'], [''], ['replicationcontrollers/status']),
        rule(['list', 'watch', 'patch', 'create', 'delete'], [''], ['pods']),
        events,
      ],
    },
    {
      name: 'deployment-controller',
      rules: [
        rule(['get', 'list', 'watch', 'update'], [apps], ['deployments']),
        rule(['update'], [apps], ['deployments/status', 'deployments/finalizers']),
        rule([...READ, 'create', 'update', 'patch', 'delete'], [apps], ['replicasets']),
        rule(['get', 'list', 'watch', 'update'], [''], ['pods']),
        events,
      ],
    },
    {
      name: 'statefulset-controller',
      rules: [
        rule(['list', 'watch'], [''], ['pods']),
        rule(READ, [apps], ['statefulsets']),
        rule(['update'], [apps], ['statefulsets/status', 'statefulsets/finalizers']),
        rule(['get', 'create', 'delete', 'update', 'patch'], [''], ['pods']),
        rule(['get', 'create', 'delete', 'update', 'patch', 'list', 'watch'], [apps], ['controllerrevisions']),
        rule(['get', 'create'], [''], ['persistentvolumeclaims']),
        rule(['update', 'delete'], [''], ['persistentvolumeclaims']),
        events,
      ],
    },
    {
      name: 'daemon-set-controller',
      rules: [
        rule(READ, [apps], ['daemonsets']),
        rule(['update'], [apps], ['daemonsets/status', 'daemonsets/finalizers']),
        rule(['list', 'watch'], [''], ['nodes']),
        rule(['list', 'watch', 'create', 'delete', 'patch'], [''], ['pods']),
        rule(['create'], [''], ['pods/binding']),
        rule(['get', 'list', 'watch', 'create', 'delete', 'update', 'patch'], [apps], ['controllerrevisions']),
        events,
      ],
    },
    {
      name: 'job-controller',
      rules: [
        rule(['get', 'list', 'watch', 'update', 'patch'], ['batch'], ['jobs']),
        rule(['update', 'patch'], ['batch'], ['jobs/status', 'jobs/finalizers']),
        rule(['list', 'watch', 'create', 'delete', 'patch'], [''], ['pods']),
        events,
      ],
    },
    {
      name: 'cronjob-controller',
      rules: [
        rule(['get', 'list', 'watch', 'update'], ['batch'], ['cronjobs']),
        rule(RW, ['batch'], ['jobs']),
        rule(['update'], ['batch'], ['cronjobs/status', 'cronjobs/finalizers']),
        rule(['list', 'delete'], [''], ['pods']),
        events,
      ],
    },
    {
      name: 'disruption-controller',
      rules: [
        rule(['get', 'list', 'watch'], [apps], ['deployments', 'replicasets', 'statefulsets']),
        rule(['get', 'list', 'watch'], [''], ['replicationcontrollers']),
        rule(['get', 'list', 'watch'], ['policy'], ['poddisruptionbudgets']),
        rule(['update'], ['policy'], ['poddisruptionbudgets/status']),
        rule(['get'], ['*'], ['*/scale']),
        rule(['patch', 'update'], [''], ['pods/status']),
        events,
      ],
    },
    {
      // Kubernetes' rules, less the metrics APIs, plus nodes/proxy: usage is read from the node agents.
      name: 'horizontal-pod-autoscaler',
      rules: [
        rule(['get', 'list', 'watch'], ['autoscaling'], ['horizontalpodautoscalers']),
        rule(['update'], ['autoscaling'], ['horizontalpodautoscalers/status']),
        rule(['get', 'update'], ['*'], ['*/scale']),
        rule(['list', 'watch'], [''], ['pods']),
        rule(['get'], [''], ['nodes/proxy']),
        events,
      ],
    },
    {
      name: 'endpoint-controller',
      rules: [
        rule(READ, [''], ['services', 'pods']),
        rule(['get', 'list', 'create', 'update', 'delete'], [''], ['endpoints']),
        rule(['create'], [''], ['endpoints/restricted']),
        events,
      ],
    },
    {
      name: 'endpointslice-controller',
      rules: [
        rule(READ, [''], ['services', 'pods', 'nodes']),
        rule(['update'], [''], ['services/finalizers']),
        rule(['get', 'list', 'create', 'update', 'delete'], [group('discovery')], ['endpointslices']),
        events,
      ],
    },
    {
      name: 'endpointslicemirroring-controller',
      rules: [
        rule(READ, [''], ['services', 'endpoints']),
        rule(['update'], [''], ['services/finalizers', 'endpoints/finalizers']),
        rule(['get', 'list', 'create', 'update', 'delete'], [group('discovery')], ['endpointslices']),
        events,
      ],
    },
    {
      name: 'generic-garbage-collector',
      rules: [rule(['get', 'list', 'watch', 'patch', 'update', 'delete'], ['*'], ['*'])],
    },
    {
      name: 'resourcequota-controller',
      rules: [rule(['list', 'watch'], ['*'], ['*']), rule(['update'], [''], ['resourcequotas/status']), events],
    },
    {
      name: 'node-controller',
      rules: [
        rule(['get', 'list', 'update', 'delete', 'patch'], [''], ['nodes']),
        rule(['patch', 'update'], [''], ['nodes/status']),
        rule(['list', 'delete'], [''], ['pods']),
        // Kubernetes patches; this node-lifecycle controller writes pod status with update.
        rule(['patch', 'update'], [''], ['pods/status']),
        events,
      ],
    },
    {
      name: 'pod-garbage-collector',
      rules: [
        rule(['list', 'watch', 'delete'], [''], ['pods']),
        rule(['get', 'list'], [''], ['nodes']),
        rule(['patch'], [''], ['pods/status']),
      ],
    },
    { name: 'ttl-controller', rules: [rule(['update', 'patch', 'list', 'watch'], [''], ['nodes']), events] },
    {
      name: 'ttl-after-finished-controller',
      rules: [rule(['get', 'list', 'watch', 'delete'], ['batch'], ['jobs']), events],
    },
    {
      name: 'bootstrap-signer',
      rules: [
        rule(READ, [''], ['secrets']),
        named(rule(['get', 'update'], [''], ['configmaps']), ['cluster-info']),
        events,
      ],
    },
    { name: 'token-cleaner', rules: [rule(['delete', 'get', 'list', 'watch'], [''], ['secrets']), events] },
    {
      name: 'legacy-service-account-token-cleaner',
      rules: [
        named(rule(['get'], [''], ['configmaps']), [legacyTokenTrackingConfigMap().name]),
        rule(['patch', 'delete'], [''], ['secrets']),
      ],
    },
    {
      name: 'certificate-controller',
      rules: [
        rule(['get', 'list', 'watch', 'delete'], [certificates], ['certificatesigningrequests']),
        rule(['update'], [certificates], ['certificatesigningrequests/status', 'certificatesigningrequests/approval']),
        named(rule(['approve'], [certificates], ['signers']), [signers.apiserverClientNodeAgent]),
        named(rule(['sign'], [certificates], ['signers']), [
          signers.legacyUnknown,
          signers.apiserverClient,
          signers.apiserverClientNodeAgent,
          signers.nodeAgentServing,
        ]),
        rule(['create'], [group('authorization')], ['subjectaccessreviews']),
        events,
      ],
    },
    {
      name: 'clusterrole-aggregation-controller',
      rules: [
        rule(['escalate', 'get', 'list', 'watch', 'update', 'patch'], [group('rbac.authorization')], ['clusterroles']),
      ],
    },
    { name: 'root-ca-cert-publisher', rules: [rule(['create', 'update'], [''], ['configmaps']), events] },
    {
      name: 'taint-eviction-controller',
      // Kubernetes patches the DisruptionTarget condition; this controller writes it with update.
      rules: [
        rule(['patch', 'update'], [''], ['pods/status']),
        rule(['list', 'get', 'delete'], [''], ['pods']),
        events,
      ],
    },
  ];
}

/** Default ClusterRoles, in creation order (aggregated sources before their targets). */
export function defaultClusterRoles(): ApiObject[] {
  const rbac = group('rbac.authorization');
  const authn = group('authentication');
  const authz = group('authorization');
  const apps = 'apps';
  const batch = 'batch';
  const coordination = group('coordination');
  const discovery = group('discovery');
  const policy = 'policy';
  const networking = group('networking');
  const autoscaling = 'autoscaling';
  const certificates = group('certificates');
  const storage = group('storage');
  const events = rule(['create', 'patch', 'update'], ['', group('events')], ['events']);
  const reviews = [rule(['create'], [authn], ['tokenreviews']), rule(['create'], [authz], ['subjectaccessreviews'])];
  const { controllerManagerName: cm, schedulerName: sched } = naming();

  const viewRules = [
    rule(
      READ,
      [''],
      [
        'pods',
        'replicationcontrollers',
        'replicationcontrollers/scale',
        'serviceaccounts',
        'services',
        'persistentvolumeclaims',
        'configmaps',
        'endpoints',
      ],
    ),
    rule(
      READ,
      [''],
      [
        'bindings',
        'events',
        'limitranges',
        'namespaces/status',
        'pods/log',
        'pods/status',
        'replicationcontrollers/status',
        'resourcequotas',
        'resourcequotas/status',
        'services/status',
        'persistentvolumeclaims/status',
      ],
    ),
    rule(READ, [''], ['namespaces']),
    rule(READ, [discovery], ['endpointslices']),
    rule(
      READ,
      [apps],
      [
        'controllerrevisions',
        'daemonsets',
        'daemonsets/status',
        'deployments',
        'deployments/scale',
        'deployments/status',
        'replicasets',
        'replicasets/scale',
        'replicasets/status',
        'statefulsets',
        'statefulsets/scale',
        'statefulsets/status',
      ],
    ),
    rule(READ, [autoscaling], ['horizontalpodautoscalers', 'horizontalpodautoscalers/status']),
    rule(READ, [batch], ['cronjobs', 'cronjobs/status', 'jobs', 'jobs/status']),
    rule(READ, [policy], ['poddisruptionbudgets', 'poddisruptionbudgets/status']),
    rule(READ, [networking], ['ingresses', 'ingresses/status', 'networkpolicies']),
    rule(READ, [coordination], ['leases']),
  ];
  const editRules = [
    rule(['impersonate'], [''], ['serviceaccounts']),
    rule(WRITE, [''], ['pods', 'pods/attach', 'pods/proxy', 'pods/exec', 'pods/portforward']),
    rule(['create'], [''], ['pods/eviction']),
    rule(
      WRITE,
      [''],
      [
        'replicationcontrollers',
        'replicationcontrollers/scale',
        'serviceaccounts',
        'services',
        'services/proxy',
        'persistentvolumeclaims',
        'configmaps',
        'secrets',
        'events',
      ],
    ),
    rule(['create'], [''], ['serviceaccounts/token']),
    rule(
      WRITE,
      [apps],
      [
        'daemonsets',
        'deployments',
        'deployments/rollback',
        'deployments/scale',
        'replicasets',
        'replicasets/scale',
        'statefulsets',
        'statefulsets/scale',
      ],
    ),
    rule(WRITE, [autoscaling], ['horizontalpodautoscalers']),
    rule(WRITE, [batch], ['cronjobs', 'jobs']),
    rule(WRITE, [policy], ['poddisruptionbudgets']),
    rule(WRITE, [networking], ['ingresses', 'networkpolicies']),
    rule(WRITE, [coordination], ['leases']),
    // edit reads secrets (view cannot).
    rule(READ, [''], ['secrets', 'pods/attach', 'pods/exec', 'pods/portforward', 'pods/proxy', 'services/proxy']),
  ];
  const adminRules = [
    rule(['create'], [authz], ['localsubjectaccessreviews']),
    rule(RW, [rbac], ['rolebindings', 'roles']),
  ];

  return [
    clusterRole('cluster-admin', [rule(['*'], ['*'], ['*']), urls(['*'], ['*'])]),
    clusterRole('system:discovery', [
      urls(
        ['get'],
        [
          '/api',
          '/api/*',
          '/apis',
          '/apis/*',
          '/healthz',
          '/livez',
          '/openapi',
          '/openapi/*',
          '/readyz',
          '/version',
          '/version/',
        ],
      ),
    ]),
    clusterRole('system:basic-user', [
      rule(['create'], [authz], ['selfsubjectaccessreviews', 'selfsubjectrulesreviews']),
      rule(['create'], [authn], ['selfsubjectreviews']),
    ]),
    clusterRole('system:public-info-viewer', [
      urls(['get'], ['/healthz', '/livez', '/readyz', '/version', '/version/']),
    ]),
    clusterRole('system:monitoring', [
      urls(
        ['get'],
        ['/healthz', '/healthz/*', '/livez', '/livez/*', '/readyz', '/readyz/*', '/metrics', '/metrics/slis'],
      ),
    ]),
    clusterRole('system:aggregate-to-view', viewRules, {
      [aggregateLabel('view')]: 'true',
      [aggregateLabel('edit')]: 'true',
      [aggregateLabel('admin')]: 'true',
    }),
    clusterRole('system:aggregate-to-edit', editRules, {
      [aggregateLabel('edit')]: 'true',
      [aggregateLabel('admin')]: 'true',
    }),
    clusterRole('system:aggregate-to-admin', adminRules, { [aggregateLabel('admin')]: 'true' }),
    aggregated('view', 'view', { [aggregateLabel('edit')]: 'true' }),
    aggregated('edit', 'edit', { [aggregateLabel('admin')]: 'true' }),
    aggregated('admin', 'admin'),
    clusterRole('system:auth-delegator', reviews),
    // Kubernetes' system:kubelet-api-admin: full access to the node agent's API (logs, exec, metrics).
    clusterRole(`system:${naming().nodeAgentName}-api-admin`, [
      rule(['get', 'list', 'watch', 'proxy'], [''], ['nodes']),
      rule(['*'], [''], ['nodes/log', 'nodes/metrics', 'nodes/proxy', 'nodes/stats']),
    ]),
    clusterRole(`system:${cm}`, [
      events,
      ...reviews,
      rule(['create'], [coordination], ['leases']),
      named(rule(['get', 'update'], [coordination], ['leases']), [cm]),
      // Service accounts, their legacy token Secrets (the token controller runs as the
      // manager) and TokenRequests for --use-service-account-credentials.
      rule(['create', 'update'], [''], ['secrets', 'serviceaccounts']),
      rule(['delete'], [''], ['secrets']),
      rule(['create'], [''], ['serviceaccounts/token']),
      named(rule(['get'], [''], ['configmaps']), ['extension-apiserver-authentication']),
      rule(['list', 'watch'], ['*'], ['*']),
      rule(['get'], [''], ['configmaps', 'namespaces', 'secrets', 'serviceaccounts']),
    ]),
    clusterRole(`system:${sched}`, [
      events,
      ...reviews,
      rule(['create'], [coordination], ['leases']),
      named(rule(['get', 'update'], [coordination], ['leases']), [sched]),
      rule(['delete', 'get', 'list', 'watch'], [''], ['pods']),
      rule(['create'], [''], ['bindings', 'pods/binding']),
      rule(['patch', 'update'], [''], ['pods/status']),
      rule(
        READ,
        [''],
        [
          'nodes',
          'namespaces',
          'persistentvolumeclaims',
          'persistentvolumes',
          'replicationcontrollers',
          'services',
          'configmaps',
        ],
      ),
      rule(READ, [apps], ['replicasets', 'statefulsets']),
      rule(READ, [policy], ['poddisruptionbudgets']),
      rule(READ, [storage], ['csinodes', 'csidrivers', 'csistoragecapacities', 'storageclasses']),
    ]),
    clusterRole('system:volume-scheduler', [
      rule(['get', 'list', 'patch', 'update', 'watch'], [''], ['persistentvolumes']),
      rule(READ, [storage], ['storageclasses']),
      rule(['get', 'list', 'patch', 'update', 'watch'], [''], ['persistentvolumeclaims']),
    ]),
    clusterRole('system:node', [
      ...reviews,
      rule(['create', 'get', 'list', 'watch', 'patch', 'update', 'delete'], [''], ['nodes']),
      rule(['patch', 'update'], [''], ['nodes/status']),
      rule(['get', 'list', 'watch', 'create', 'delete'], [''], ['pods']),
      rule(['patch', 'update'], [''], ['pods/status']),
      rule(['create'], [''], ['pods/eviction']),
      rule(['get', 'list', 'watch'], [''], ['services', 'endpoints']),
      rule(['get'], [''], ['secrets', 'configmaps', 'persistentvolumeclaims', 'persistentvolumes']),
      rule(['create'], [''], ['serviceaccounts/token']),
      rule(['create', 'get', 'update', 'patch', 'delete'], [coordination], ['leases']),
      rule(['create', 'get', 'list', 'watch'], [certificates], ['certificatesigningrequests']),
      events,
    ]),
    clusterRole('system:node-proxier', [
      rule(['list', 'watch'], [''], ['services', 'endpoints']),
      rule(['get', 'list', 'watch'], [''], ['nodes']),
      rule(['list', 'watch'], [discovery], ['endpointslices']),
      events,
    ]),
    clusterRole('system:node-bootstrapper', [
      rule(['create', 'get', 'list', 'watch'], [certificates], ['certificatesigningrequests']),
    ]),
    // Node agents' client certificates: the first (nodeclient) and renewals (selfnodeclient), as
    // the CSR approver checks them; then an `approve` role per built-in signer.
    ...['nodeclient', 'selfnodeclient'].map((sub) =>
      clusterRole(`system:${certificates}:certificatesigningrequests:${sub}`, [
        rule(['create'], [certificates], [`certificatesigningrequests/${sub}`]),
      ]),
    ),
    ...Object.values(naming().signerNames).map((signer) =>
      clusterRole(`system:${certificates}:${signer.split('/')[1] ?? ''}-approver`, [
        named(rule(['approve'], [certificates], ['signers']), [signer]),
      ]),
    ),
    ...controllerRoles().map((c) => clusterRole(`system:controller:${c.name}`, c.rules)),
  ];
}

/** Default ClusterRoleBindings. */
export function defaultClusterRoleBindings(): ApiObject[] {
  const { controllerManagerName: cm, schedulerName: sched, systemNamespace } = naming();
  const authenticated: SubjectSpec = { kind: 'Group', name: 'system:authenticated' };
  return [
    binding('cluster-admin', 'cluster-admin', [{ kind: 'Group', name: 'system:masters' }]),
    binding('system:discovery', 'system:discovery', [authenticated]),
    binding('system:basic-user', 'system:basic-user', [authenticated]),
    binding('system:public-info-viewer', 'system:public-info-viewer', [
      authenticated,
      { kind: 'Group', name: 'system:unauthenticated' },
    ]),
    binding('system:monitoring', 'system:monitoring', [{ kind: 'Group', name: 'system:monitoring' }]),
    binding(`system:${cm}`, `system:${cm}`, [{ kind: 'User', name: `system:${cm}` }]),
    binding(`system:${sched}`, `system:${sched}`, [{ kind: 'User', name: `system:${sched}` }]),
    binding('system:volume-scheduler', 'system:volume-scheduler', [{ kind: 'User', name: `system:${sched}` }]),
    binding('system:node-proxier', 'system:node-proxier', [{ kind: 'User', name: 'system:kube-proxy' }]),
    ...controllerRoles().map((c) =>
      binding(`system:controller:${c.name}`, `system:controller:${c.name}`, [
        { kind: 'ServiceAccount', name: c.name, namespace: systemNamespace },
      ]),
    ),
  ];
}
