/**
 * The controllers Kubernetes v1.32's controller manager knows, by canonical name, with the
 * short alias each also answers to in `--controllers` (the spec uses both spellings).
 * `run` marks those this manager implements; the others are accepted and reported as
 * not run.
 */
export const KNOWN_CONTROLLERS: ReadonlyArray<{ name: string; alias?: string; run?: true; disabledByDefault?: true }> =
  [
    { name: 'serviceaccount-token-controller', alias: 'serviceaccount-token', run: true },
    { name: 'endpoints-controller', alias: 'endpoint', run: true },
    { name: 'endpointslice-controller', alias: 'endpointslice', run: true },
    { name: 'endpointslice-mirroring-controller', alias: 'endpointslicemirroring', run: true },
    { name: 'replicationcontroller-controller', alias: 'replicationcontroller', run: true },
    { name: 'pod-garbage-collector-controller', alias: 'podgc', run: true },
    { name: 'resourcequota-controller', alias: 'resourcequota', run: true },
    { name: 'namespace-controller', alias: 'namespace', run: true },
    { name: 'serviceaccount-controller', alias: 'serviceaccount', run: true },
    { name: 'garbage-collector-controller', alias: 'garbagecollector', run: true },
    { name: 'daemonset-controller', alias: 'daemonset', run: true },
    { name: 'job-controller', alias: 'job', run: true },
    { name: 'deployment-controller', alias: 'deployment', run: true },
    { name: 'replicaset-controller', alias: 'replicaset', run: true },
    { name: 'horizontal-pod-autoscaler-controller', alias: 'horizontalpodautoscaling', run: true },
    { name: 'disruption-controller', alias: 'disruption', run: true },
    { name: 'statefulset-controller', alias: 'statefulset', run: true },
    { name: 'cronjob-controller', alias: 'cronjob', run: true },
    { name: 'certificatesigningrequest-signing-controller', alias: 'csrsigning', run: true },
    { name: 'certificatesigningrequest-approving-controller', alias: 'csrapproving', run: true },
    { name: 'certificatesigningrequest-cleaner-controller', alias: 'csrcleaner' },
    { name: 'ttl-controller', alias: 'ttl', run: true },
    { name: 'bootstrap-signer-controller', alias: 'bootstrapsigner', run: true, disabledByDefault: true },
    { name: 'token-cleaner-controller', alias: 'tokencleaner', run: true, disabledByDefault: true },
    { name: 'node-ipam-controller', alias: 'nodeipam', run: true },
    { name: 'node-lifecycle-controller', alias: 'nodelifecycle', run: true },
    { name: 'taint-eviction-controller', run: true },
    { name: 'service-lb-controller', alias: 'service' },
    { name: 'node-route-controller', alias: 'route' },
    { name: 'cloud-node-lifecycle-controller', alias: 'cloud-node-lifecycle' },
    { name: 'persistentvolume-binder-controller', alias: 'persistentvolume-binder' },
    { name: 'persistentvolume-attach-detach-controller', alias: 'attachdetach' },
    { name: 'persistentvolume-expander-controller', alias: 'persistentvolume-expander' },
    { name: 'clusterrole-aggregation-controller', alias: 'clusterrole-aggregation', run: true },
    { name: 'persistentvolumeclaim-protection-controller', alias: 'pvc-protection' },
    { name: 'persistentvolume-protection-controller', alias: 'pv-protection' },
    { name: 'ttl-after-finished-controller', alias: 'ttl-after-finished', run: true },
    { name: 'root-ca-certificate-publisher-controller', alias: 'root-ca-cert-publisher', run: true },
    { name: 'ephemeral-volume-controller', alias: 'ephemeral-volume' },
    { name: 'storageversion-garbage-collector-controller', alias: 'storage-version-gc' },
    { name: 'resourceclaim-controller', alias: 'resource-claim-controller' },
    {
      name: 'legacy-serviceaccount-token-cleaner-controller',
      alias: 'legacy-service-account-token-cleaner',
      run: true,
    },
    { name: 'validatingadmissionpolicy-status-controller' },
    { name: 'service-cidr-controller' },
    { name: 'storage-version-migrator-controller' },
  ];

/** The outcome of `--controllers`: which canonical names are on. */
export interface ControllerSelection {
  /** Canonical names that will run (implemented and enabled). */
  enabled: Set<string>;
  /** Canonical names enabled but not implemented here (reported once at start). */
  notImplemented: string[];
}

/** The canonical name of `name` (itself or its alias), or undefined when unknown. */
export function canonicalControllerName(name: string): string | undefined {
  return KNOWN_CONTROLLERS.find((c) => c.name === name || c.alias === name)?.name;
}

/**
 * `--controllers`: `*` turns on every controller on by default, `foo` turns `foo` on, `-foo`
 * turns it off; an explicit name wins over `*` (as Kubernetes: a controller is on when named,
 * off when named with `-`, and otherwise on only with `*` and when on by default). Unknown
 * names are an error.
 */
export function parseControllers(items: readonly string[]): ControllerSelection {
  const on = new Set<string>();
  const off = new Set<string>();
  let star = false;
  for (const raw of items) {
    const item = raw.trim();
    if (item === '*') {
      star = true;
      continue;
    }
    const negated = item.startsWith('-');
    const name = canonicalControllerName(negated ? item.slice(1) : item);
    if (!name) throw new Error(`${JSON.stringify(item)} is not in the list of known controllers`);
    (negated ? off : on).add(name);
  }
  const enabled = new Set<string>();
  const notImplemented: string[] = [];
  for (const c of KNOWN_CONTROLLERS) {
    const wanted = off.has(c.name) ? false : on.has(c.name) ? true : star && !c.disabledByDefault;
    if (!wanted) continue;
    if (c.run) enabled.add(c.name);
    else notImplemented.push(c.name);
  }
  return { enabled, notImplemented };
}
