import {
  fieldErrorMessage,
  group,
  groupSpellings,
  internalError,
  nodeTaintKey,
  notFound,
  schedulerNamespaceAnnotation,
  type ApiObject,
  type Pod,
  type Toleration,
} from '@svc/api';
import { quantityMilliValue } from '@svc/machinery';
import { ConfigurationError } from '../options.js';
import type { AdmissionAttributes, AdmissionPlugin } from './admission.js';
import { plainError } from './admission-errors.js';
import type { AdmissionContext } from './plugins.js';
import { mergeTolerations, validateTolerations, verifyAgainstWhitelist } from './tolerations.js';

/** The cluster's default tolerations and whitelist, for namespaces without the annotations. */
export interface PodTolerationRestrictionConfig {
  default: Toleration[];
  whitelist: Toleration[];
}

/** The API versions the configuration may be written in: `podtolerationrestriction.admission.<suffix>/v1alpha1`, `v1`. */
export function podTolerationRestrictionConfigVersions(): string[] {
  return groupSpellings(group('podtolerationrestriction.admission')).flatMap((g) => [`${g}/v1alpha1`, `${g}/v1`]);
}

/**
 * Reads PodTolerationRestriction's entry of `--admission-control-config-file` (Kubernetes'
 * Configuration, `podtolerationrestriction.admission.<suffix>/v1`): `default` and `whitelist`
 * tolerations, validated as pod tolerations are (Kubernetes' `invalid config: [...]`). A bad one is
 * a `ConfigurationError` (exit 2); none is an empty configuration.
 */
export function parsePodTolerationRestrictionConfig(raw: unknown): PodTolerationRestrictionConfig {
  const fail = (why: string): never => {
    throw new ConfigurationError(`--admission-control-config-file: PodTolerationRestriction: ${why}`);
  };
  if (raw === undefined || raw === null) return { default: [], whitelist: [] };
  if (typeof raw !== 'object' || Array.isArray(raw)) return fail('configuration must be an object');
  const doc = raw as Record<string, unknown>;
  const versions = podTolerationRestrictionConfigVersions();
  if (doc.kind !== 'Configuration' || typeof doc.apiVersion !== 'string' || !versions.includes(doc.apiVersion)) {
    return fail(
      `expected kind Configuration in ${versions.join(', ')}, got ${String(doc.kind)} in ${String(doc.apiVersion)}`,
    );
  }
  const list = (key: string): Toleration[] => {
    const v = doc[key] ?? [];
    if (!Array.isArray(v) || v.some((t) => t === null || typeof t !== 'object' || Array.isArray(t))) {
      return fail(`${key} must be a list of tolerations`);
    }
    return v as Toleration[];
  };
  const config = { default: list('default'), whitelist: list('whitelist') };
  const errs = [
    ...validateTolerations(config.default, 'podtolerationrestriction.default'),
    ...validateTolerations(config.whitelist, 'podtolerationrestriction.whitelist'),
  ];
  if (errs.length > 0) return fail(`invalid config: [${errs.map(fieldErrorMessage).join(' ')}]`);
  return config;
}

/**
 * Kubernetes' PodTolerationRestriction. A pod created gets its namespace's default tolerations
 * (annotation `scheduler.alpha.<prefix>/defaultTolerations`, a JSON list; else the configuration's
 * `default`), and a pod created or updated that is not BestEffort the `memory-pressure:NoSchedule`
 * toleration, merged with its own (covered ones dropped). Its tolerations must then be covered by
 * the namespace's whitelist (`scheduler.alpha.<prefix>/tolerationsWhitelist`; else the
 * configuration's `whitelist`; an empty one allows all), else the request fails with Kubernetes'
 * plain error (a 500): `pod tolerations (possibly merged with namespace default tolerations)
 * conflict with its namespace whitelist` (`cluster whitelist` for the configuration's).
 */
export class PodTolerationRestriction implements AdmissionPlugin {
  readonly name = 'PodTolerationRestriction';

  constructor(
    private readonly o: {
      /** Reads a namespace (cache first, then storage); undefined when it does not exist. */
      getNamespace(name: string): Promise<ApiObject | undefined>;
      config: PodTolerationRestrictionConfig;
    },
  ) {}

  async admit(a: AdmissionAttributes): Promise<void> {
    const pod = podOf(a);
    if (!pod) return;
    const extra: Toleration[] = [];
    if (a.operation === 'CREATE') {
      const ns = await this.namespace(a.namespace);
      extra.push(...(annotatedTolerations(ns, 'defaultTolerations') ?? this.o.config.default));
    }
    if (!isBestEffort(pod)) {
      extra.push({ key: nodeTaintKey('memory-pressure'), operator: 'Exists', effect: 'NoSchedule' });
    }
    if (extra.length > 0) pod.spec.tolerations = mergeTolerations(pod.spec.tolerations ?? [], extra);
    await this.validate(a);
  }

  async validate(a: AdmissionAttributes): Promise<void> {
    const pod = podOf(a);
    const tolerations = pod?.spec.tolerations ?? [];
    if (tolerations.length === 0) return;
    const own = annotatedTolerations(await this.namespace(a.namespace), 'tolerationsWhitelist');
    const [whitelist, scope] = own ? [own, 'namespace'] : [this.o.config.whitelist, 'cluster'];
    if (!verifyAgainstWhitelist(tolerations, whitelist)) {
      throw plainError(
        `pod tolerations (possibly merged with namespace default tolerations) conflict with its ${scope} whitelist`,
      );
    }
  }

  private async namespace(name: string): Promise<ApiObject> {
    let ns: ApiObject | undefined;
    try {
      ns = await this.o.getNamespace(name);
    } catch (e) {
      throw internalError((e as Error).message);
    }
    if (!ns) throw notFound({ group: '', resource: 'namespaces' }, name);
    return ns;
  }
}

/**
 * The tolerations of a namespace annotation: undefined without it, none when it is empty, else
 * its JSON list (one that does not parse is a plain error, as in Kubernetes).
 */
function annotatedTolerations(
  ns: ApiObject,
  which: 'defaultTolerations' | 'tolerationsWhitelist',
): Toleration[] | undefined {
  const text = ns.metadata.annotations?.[schedulerNamespaceAnnotation(which)];
  if (text === undefined) return undefined;
  if (text === '') return [];
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    throw plainError((e as Error).message);
  }
  if (v === null) return [];
  if (!Array.isArray(v) || v.some((t) => t === null || typeof t !== 'object' || Array.isArray(t))) {
    throw plainError(
      `json: cannot unmarshal ${Array.isArray(v) ? 'array element' : typeof v} into Go value of type []v1.Toleration`,
    );
  }
  return v as Toleration[];
}

/** Kubernetes' QoS class BestEffort: no container or init container requests or limits CPU or memory. */
function isBestEffort(pod: Pod): boolean {
  const qos = (pod.status as { qosClass?: string } | undefined)?.qosClass;
  if (qos) return qos === 'BestEffort';
  const positive = (q: unknown): boolean => {
    try {
      return typeof q === 'string' || typeof q === 'number' ? quantityMilliValue(String(q)) > 0 : false;
    } catch {
      return false;
    }
  };
  return [...(pod.spec.containers ?? []), ...(pod.spec.initContainers ?? [])].every((c) =>
    [c.resources?.requests, c.resources?.limits].every((list) => !['cpu', 'memory'].some((r) => positive(list?.[r]))),
  );
}

function podOf(a: AdmissionAttributes): Pod | undefined {
  if ((a.operation !== 'CREATE' && a.operation !== 'UPDATE') || !a.object || a.subresource !== '') return undefined;
  if (a.resource.group !== '' || a.resource.plural !== 'pods') return undefined;
  const pod = a.object as Pod;
  pod.spec ??= { containers: [] };
  return pod;
}

export function newPodTolerationRestriction(c: AdmissionContext): PodTolerationRestriction {
  const namespaces = { group: '', version: 'v1', resource: 'namespaces' };
  return new PodTolerationRestriction({
    getNamespace: (name) => c.read(namespaces, { namespace: '', name }),
    config: parsePodTolerationRestrictionConfig(c.config('PodTolerationRestriction')),
  });
}
