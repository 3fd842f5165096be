import { internalError, schedulerNamespaceAnnotation, type ApiObject, type Pod } from '@svc/api';
import { isQualifiedName, isValidLabelValue } from '@svc/machinery';
import { ConfigurationError } from '../options.js';
import type { AdmissionAttributes, AdmissionPlugin } from './admission.js';
import { admissionForbidden, plainError } from './admission-errors.js';
import type { AdmissionContext } from './plugins.js';

type Labels = Record<string, string>;

/** The configuration key of the selector for namespaces without the annotation. */
const CLUSTER_DEFAULT = 'clusterDefaultNodeSelector';

/**
 * PodNodeSelector's configuration (Kubernetes' unversioned `podNodeSelectorPluginConfig` map):
 * `clusterDefaultNodeSelector`, and per namespace the selector that namespace's pods may use
 * (their whitelist). The key is matched case-insensitively, as Go's JSON decoder does. Where
 * Kubernetes ignores a configuration it cannot decode, svc refuses it: a `ConfigurationError`.
 */
export function parsePodNodeSelectorConfig(raw: unknown): Labels {
  const fail = (why: string): never => {
    throw new ConfigurationError(`--admission-control-config-file: PodNodeSelector: ${why}`);
  };
  if (raw === undefined || raw === null) return {};
  if (typeof raw !== 'object' || Array.isArray(raw)) return fail('configuration must be an object');
  const entry = Object.entries(raw).find(([k]) => k.toLowerCase() === 'podnodeselectorpluginconfig');
  const map: unknown = entry?.[1] ?? {};
  if (map === null || typeof map !== 'object' || Array.isArray(map)) {
    return fail('podNodeSelectorPluginConfig must be a map of strings');
  }
  const out: Labels = {};
  for (const [k, v] of Object.entries(map)) {
    if (typeof v !== 'string') return fail(`podNodeSelectorPluginConfig.${k} must be a string`);
    out[k] = v;
  }
  return out;
}

/**
 * Kubernetes' ConvertSelectorToLabelsMap: `k=v,k2=v2` (spaces trimmed) into labels; throws with
 * Kubernetes' text for a term without exactly one `=`, or a bad key or value.
 */
export function selectorToLabels(selector: string): Labels {
  const out: Labels = {};
  if (selector === '') return out;
  for (const term of selector.split(',')) {
    const kv = term.split('=');
    if (kv.length !== 2) throw new Error(`invalid selector: [${kv.join(' ')}]`);
    const key = (kv[0] ?? '').trim();
    const keyErrs = isQualifiedName(key);
    if (keyErrs.length > 0) throw new Error(`: Invalid value: ${JSON.stringify(key)}: ${keyErrs.join('; ')}`);
    const value = (kv[1] ?? '').trim();
    const valueErrs = isValidLabelValue(value);
    if (valueErrs.length > 0) throw new Error(`: Invalid value: ${JSON.stringify(value)}: ${valueErrs.join('; ')}`);
    out[key] = value;
  }
  return out;
}

/** Some key in both with different values (Kubernetes' labels.Conflicts). */
const conflicts = (x: Labels, y: Labels): boolean => Object.entries(x).some(([k, v]) => k in y && y[k] !== v);

/**
 * Kubernetes' PodNodeSelector: a pod created in a namespace annotated
 * `scheduler.alpha.<prefix>/node-selector: k=v,...` (else the configuration's
 * `clusterDefaultNodeSelector`) gets those labels merged into `spec.nodeSelector` (the pod's own
 * values win); a pod selector that contradicts the namespace's is a 403 `pod node label selector
 * conflicts with its namespace node label selector`, and one with labels outside the
 * configuration's selector for its namespace a 403 `pod node label selector labels conflict with
 * its namespace whitelist`. A selector that does not parse is a plain 500, as in Kubernetes.
 */
export class PodNodeSelector implements AdmissionPlugin {
  readonly name = 'PodNodeSelector';

  constructor(
    private readonly o: {
      /** Reads a namespace (cache first, then storage); undefined when it does not exist. */
      getNamespace(name: string): Promise<ApiObject | undefined>;
      /** The configuration: `clusterDefaultNodeSelector` and per-namespace whitelists. */
      config: Labels;
    },
  ) {}

  async admit(a: AdmissionAttributes): Promise<void> {
    const pod = podOf(a);
    if (!pod) return;
    const namespaceSelector = await this.namespaceSelector(a.namespace);
    const own = pod.spec.nodeSelector ?? {};
    if (conflicts(namespaceSelector, own)) {
      throw admissionForbidden(a, 'pod node label selector conflicts with its namespace node label selector');
    }
    const merged = { ...namespaceSelector, ...own };
    if (Object.keys(merged).length > 0) pod.spec.nodeSelector = merged;
    await this.validate(a);
  }

  async validate(a: AdmissionAttributes): Promise<void> {
    const pod = podOf(a);
    if (!pod) return;
    const own = pod.spec.nodeSelector ?? {};
    if (conflicts(await this.namespaceSelector(a.namespace), own)) {
      throw admissionForbidden(a, 'pod node label selector conflicts with its namespace node label selector');
    }
    const whitelist = parsed(this.o.config[a.namespace] ?? '');
    const keys = Object.keys(whitelist);
    if (keys.length > 0 && Object.entries(own).some(([k, v]) => whitelist[k] !== v)) {
      throw admissionForbidden(a, 'pod node label selector labels conflict with its namespace whitelist');
    }
  }

  /** The namespace's annotation, else the cluster default. */
  private async namespaceSelector(name: string): Promise<Labels> {
    let ns: ApiObject | undefined;
    try {
      ns = await this.o.getNamespace(name);
    } catch (e) {
      throw internalError((e as Error).message);
    }
    if (!ns) throw internalError(`namespace ${name} does not exist`);
    const annotation = ns.metadata.annotations?.[schedulerNamespaceAnnotation('node-selector')];
    return parsed(annotation ?? this.o.config[CLUSTER_DEFAULT] ?? '');
  }
}

/** A selector's labels; one that does not parse is a plain error, as Kubernetes returns it. */
function parsed(selector: string): Labels {
  try {
    return selectorToLabels(selector);
  } catch (e) {
    throw plainError((e as Error).message);
  }
}

function podOf(a: AdmissionAttributes): Pod | undefined {
  if (a.operation !== 'CREATE' || !a.object || a.subresource !== '') return undefined;
  if (a.resource.group !== '' || a.resource.plural !== 'pods') return undefined;
  const pod = a.object as Pod;
  pod.spec ??= { containers: [] };
  return pod;
}

export function newPodNodeSelector(c: AdmissionContext): PodNodeSelector {
  const namespaces = { group: '', version: 'v1', resource: 'namespaces' };
  return new PodNodeSelector({
    getNamespace: (name) => c.read(namespaces, { namespace: '', name }),
    config: parsePodNodeSelectorConfig(c.config('PodNodeSelector')),
  });
}
