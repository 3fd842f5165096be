import {
  fieldErrorMessage,
  internalError,
  invalid,
  podSecurityLabelPrefix,
  type ApiObject,
  type Container,
  type FieldError,
  type Namespace,
  type ObjectMeta,
  type Pod,
  type PodSpec,
  type StatusError,
} from '@svc/api';
import type { AdmissionAttributes, AdmissionPlugin } from '../admission.js';
import { admissionForbidden } from '../admission-errors.js';
import type { AdmissionContext } from '../plugins.js';
import { parsePodSecurityConfig, type PodSecurityConfig } from './config.js';
import { Evaluator, aggregate, forbiddenDetail, forbiddenReason } from './evaluator.js';
import {
  MODES,
  compareLevels,
  equivalentPolicies,
  fullyPrivileged,
  levelVersionString,
  policyLabel,
  policyToEvaluate,
  versionString,
  type LevelVersion,
  type Policy,
} from './policy.js';

/** How PodSecurity reads the cluster: a namespace (undefined when missing) and a namespace's pods. */
export interface PodSecuritySources {
  getNamespace(name: string): Promise<Namespace | undefined>;
  listPods(namespace: string): Promise<Pod[]>;
}

export interface PodSecurityOptions extends PodSecuritySources {
  config: PodSecurityConfig;
  evaluator?: Evaluator;
  /** How many existing pods a namespace relabel checks at most (Kubernetes: 3000). */
  maxPodsToCheck?: number;
  /** How long a namespace relabel checks existing pods at most (Kubernetes: 1 s). */
  podCheckTimeoutMs?: number;
}

/** Pod subresources that cannot change a pod's spec: not evaluated. */
const IGNORED_POD_SUBRESOURCES = new Set([
  'exec',
  'attach',
  'binding',
  'eviction',
  'log',
  'portforward',
  'proxy',
  'status',
]);

type TemplateOf = (obj: ApiObject) => { metadata?: ObjectMeta; spec?: PodSpec } | undefined;

const spec = (o: ApiObject): Record<string, unknown> => (o.spec ?? {}) as Record<string, unknown>;
const template = (t: unknown): ReturnType<TemplateOf> => t as ReturnType<TemplateOf>;

/** The workload resources whose pod template is evaluated (warn and audit only), by `group/resource`. */
const POD_TEMPLATES: Readonly<Record<string, TemplateOf>> = {
  '/replicationcontrollers': (o) => template(spec(o).template),
  '/podtemplates': (o) => template(o.template),
  'apps/replicasets': (o) => template(spec(o).template),
  'apps/deployments': (o) => template(spec(o).template),
  'apps/statefulsets': (o) => template(spec(o).template),
  'apps/daemonsets': (o) => template(spec(o).template),
  'batch/jobs': (o) => template(spec(o).template),
  'batch/cronjobs': (o) =>
    template((spec(o).jobTemplate as { spec?: { template?: unknown } } | undefined)?.spec?.template),
};

/** The audit annotations of one decision, before the `pod-security.<suffix>/` prefix. */
type Annotations = Record<string, string>;

/**
 * Kubernetes' PodSecurity admission (validating): pods are checked against their namespace's
 * `enforce` level (a violation is a 403), `audit` level (the `audit-violations` audit
 * annotation) and `warn` level (a Warning); pod templates of workload resources get audit and
 * warn only. Namespace labels are validated, and raising a namespace's enforce level warns
 * about the existing pods that would violate it. The exemptions and defaults come from the
 * admission configuration file; no namespace is exempt by default, as in Kubernetes.
 */
export class PodSecurity implements AdmissionPlugin {
  readonly name = 'PodSecurity';
  private readonly evaluator: Evaluator;
  private readonly config: PodSecurityConfig;

  constructor(private readonly o: PodSecurityOptions) {
    this.evaluator = o.evaluator ?? new Evaluator();
    this.config = o.config;
  }

  async validate(a: AdmissionAttributes): Promise<void> {
    if ((a.operation !== 'CREATE' && a.operation !== 'UPDATE') || !a.object) return;
    const r = a.resource;
    if (r.group === '' && r.plural === 'namespaces') return this.validateNamespace(a, a.object);
    if (r.group === '' && r.plural === 'pods') return this.validatePod(a, a.object as Pod);
    const templateOf = POD_TEMPLATES[`${r.group}/${r.plural}`];
    if (templateOf) return this.validatePodController(a, templateOf(a.object));
    return undefined;
  }

  private get defaults(): Policy {
    return this.config.defaults;
  }

  private validateNamespace(a: AdmissionAttributes, ns: ApiObject): Promise<void> {
    if (a.subresource !== '') return Promise.resolve();
    // A namespace's admission namespace is its own name, as Kubernetes' handlers set it.
    const name = a.name;
    const labels = ns.metadata.labels;
    const { policy, errors } = policyToEvaluate(labels, this.defaults);
    if (a.operation === 'CREATE') {
      if (errors.length > 0) throw invalid({ group: '', kind: 'Namespace' }, name, errors);
      this.warnIfExempt(a, { name, policy, labels });
      return Promise.resolve();
    }
    const old = policyToEvaluate(a.oldObject?.metadata.labels, this.defaults);
    if (errors.length > 0 && (old.errors.length === 0 || errorsText(errors) !== errorsText(old.errors))) {
      throw invalid({ group: '', kind: 'Namespace' }, name, errors);
    }
    const [next, prev] = [policy.enforce, old.policy.enforce];
    const unchanged = next.level === prev.level && versionString(next.version) === versionString(prev.version);
    if (unchanged || next.level === 'privileged') return Promise.resolve();
    if (versionString(next.version) === versionString(prev.version) && compareLevels(next.level, prev.level) < 1) {
      return Promise.resolve();
    }
    if (this.exemptNamespace(name)) {
      this.warnIfExempt(a, { name, policy, labels });
      return Promise.resolve();
    }
    return this.evaluatePodsInNamespace(name, next).then((warnings) => {
      a.warnings.push(...warnings);
    });
  }

  private async validatePod(a: AdmissionAttributes, pod: Pod): Promise<void> {
    if (IGNORED_POD_SUBRESOURCES.has(a.subresource)) return;
    if (this.exempt(a)) return;
    const ns = await this.o.getNamespace(a.namespace);
    if (!ns) {
      const why = `failed to lookup namespace "${a.namespace}"`;
      this.annotate(a, { error: `Internal error occurred: ${why}: namespaces "${a.namespace}" not found` });
      throw internalError(why);
    }
    const { policy, errors } = policyToEvaluate(ns.metadata.labels, this.defaults);
    if (errors.length === 0 && fullyPrivileged(policy)) {
      this.annotate(a, { 'enforce-policy': 'privileged:latest' });
      return;
    }
    if (a.operation === 'UPDATE' && a.oldObject && !isSignificantPodUpdate(pod, a.oldObject as Pod)) return;
    this.evaluatePod(a, { policy, errors, meta: pod.metadata, spec: pod.spec ?? {}, enforce: true });
  }

  private async validatePodController(
    a: AdmissionAttributes,
    tmpl: { metadata?: ObjectMeta; spec?: PodSpec } | undefined,
  ): Promise<void> {
    if (a.subresource !== '') return;
    if (this.exempt(a)) return;
    const ns = await this.o.getNamespace(a.namespace);
    if (!ns) {
      this.annotate(a, { error: `failed to lookup namespace "${a.namespace}": namespaces "${a.namespace}" not found` });
      return;
    }
    const { policy, errors } = policyToEvaluate(ns.metadata.labels, this.defaults);
    if (errors.length === 0 && policy.warn.level === 'privileged' && policy.audit.level === 'privileged') return;
    if (!tmpl) return;
    this.evaluatePod(a, {
      policy,
      errors,
      meta: tmpl.metadata ?? {},
      spec: tmpl.spec ?? ({} as PodSpec),
      enforce: false,
    });
  }

  /** Exempt namespaces and users pass, with the `exempt` audit annotation saying why. */
  private exempt(a: AdmissionAttributes): boolean {
    if (this.exemptNamespace(a.namespace)) {
      this.annotate(a, { exempt: 'namespace' });
      return true;
    }
    const user = a.user?.name ?? '';
    if (user !== '' && this.config.exemptions.usernames.includes(user)) {
      this.annotate(a, { exempt: 'user' });
      return true;
    }
    return false;
  }

  private exemptNamespace(ns: string): boolean {
    return ns !== '' && this.config.exemptions.namespaces.includes(ns);
  }

  /**
   * Evaluates a pod or pod template: the enforce level only for pods (`enforce`), a violation
   * of it a 403 with Kubernetes' message; the audit level's violation an audit annotation; the
   * warn level's a Warning unless the request is denied anyway.
   */
  private evaluatePod(
    a: AdmissionAttributes,
    e: { policy: Policy; errors: FieldError[]; meta: ObjectMeta; spec: PodSpec; enforce: boolean },
  ): void {
    const runtimeClass = e.spec.runtimeClassName;
    if (runtimeClass && this.config.exemptions.runtimeClasses.includes(runtimeClass)) {
      this.annotate(a, { exempt: 'runtimeClass' });
      return;
    }
    const annotations: Annotations = {};
    if (e.errors.length > 0) annotations.error = `Failed to parse policy: ${aggregateText(e.errors)}`;
    const evaluate = this.evaluator.cached();
    let denied: StatusError | undefined;
    if (e.enforce) {
      annotations['enforce-policy'] = levelVersionString(e.policy.enforce);
      const r = evaluate(e.policy.enforce, e.meta, e.spec);
      if (!r.allowed) {
        const why = `violates PodSecurity "${levelVersionString(e.policy.enforce)}": ${forbiddenDetail(r)}`;
        denied = admissionForbidden(a, why);
      }
    }
    const audit = evaluate(e.policy.audit, e.meta, e.spec);
    if (!audit.allowed) {
      annotations['audit-violations'] =
        `would violate PodSecurity "${levelVersionString(e.policy.audit)}": ${forbiddenDetail(audit)}`;
    }
    if (!denied) {
      const warn = evaluate(e.policy.warn, e.meta, e.spec);
      if (!warn.allowed) {
        a.warnings.push(`would violate PodSecurity "${levelVersionString(e.policy.warn)}": ${forbiddenDetail(warn)}`);
      }
    }
    this.annotate(a, annotations);
    if (denied) throw denied;
  }

  /**
   * The warnings for raising a namespace's enforce level: which existing pods would violate it,
   * grouped by their reasons (one pod per controller first), within a time and pod budget.
   */
  private async evaluatePodsInNamespace(namespace: string, enforce: LevelVersion): Promise<string[]> {
    const deadline = Date.now() + (this.o.podCheckTimeoutMs ?? 1000);
    let pods: Pod[];
    try {
      pods = await this.o.listPods(namespace);
    } catch {
      return ['failed to list pods while checking new PodSecurity enforce level'];
    }
    const prioritized = this.prioritizePods(pods);
    const total = prioritized.length;
    const toCheck = prioritized.slice(0, this.o.maxPodsToCheck ?? 3000);
    let checked = toCheck.length;
    const byWarning = new Map<string, { podName: string; count: number }>();
    for (const [i, pod] of toCheck.entries()) {
      const r = aggregate(this.evaluator.evaluate(enforce, pod.metadata, pod.spec ?? {}));
      if (!r.allowed) {
        const warning = forbiddenReason(r);
        const name = pod.metadata.name ?? '';
        const seen = byWarning.get(warning);
        if (!seen) byWarning.set(warning, { podName: name, count: 1 });
        else {
          seen.count++;
          if (name < seen.podName) seen.podName = name;
        }
      }
      if (Date.now() > deadline) {
        checked = i + 1;
        break;
      }
    }
    const out: string[] = [];
    if (checked < total) {
      out.push(`new PodSecurity enforce level only checked against the first ${checked} of ${total} existing pods`);
    }
    if (byWarning.size > 0) {
      out.push(
        `existing pods in namespace "${namespace}" violate the new PodSecurity enforce level "${levelVersionString(enforce)}"`,
      );
    }
    const perPod = [...byWarning].map(([warning, { podName, count }]) => {
      if (count === 1) return `${podName}: ${warning}`;
      if (count === 2) return `${podName} (and 1 other pod): ${warning}`;
      return `${podName} (and ${count - 1} other pods): ${warning}`;
    });
    return [...out, ...perPod.sort()];
  }

  /** Pods of exempt runtime classes left out; the first pod of each controller before the rest. */
  private prioritizePods(pods: Pod[]): Pod[] {
    const first: Pod[] = [];
    const rest: Pod[] = [];
    const controllers = new Set<string>();
    for (const pod of pods) {
      const rc = pod.spec?.runtimeClassName;
      if (rc && this.config.exemptions.runtimeClasses.includes(rc)) continue;
      const owner = pod.metadata.ownerReferences?.find((ref) => ref.controller === true);
      if (!owner) first.push(pod);
      else if (controllers.has(owner.uid)) rest.push(pod);
      else {
        controllers.add(owner.uid);
        first.push(pod);
      }
    }
    return [...first, ...rest];
  }

  /**
   * Warns when an exempt namespace labels a policy other than the defaults: the modes whose
   * level is not privileged and that the labels set, e.g. `(enforce=restricted:latest)`.
   */
  private warnIfExempt(
    a: AdmissionAttributes,
    n: { name: string; policy: Policy; labels: Readonly<Record<string, string>> | undefined },
  ): void {
    if (!this.exemptNamespace(n.name)) return;
    if (fullyPrivileged(n.policy) || equivalentPolicies(n.policy, this.defaults)) return;
    const labels = n.labels ?? {};
    const parts = MODES.filter(
      (m) =>
        n.policy[m].level !== 'privileged' &&
        (labels[policyLabel(m, 'level')] !== undefined || labels[policyLabel(m, 'version')] !== undefined),
    ).map((m) => `${m}=${levelVersionString(n.policy[m])}`);
    a.warnings.push(
      `namespace "${n.name}" is exempt from Pod Security, and the policy (${parts.join(', ')}) will be ignored`,
    );
  }

  private annotate(a: AdmissionAttributes, annotations: Annotations): void {
    for (const [k, v] of Object.entries(annotations)) a.annotations[`${podSecurityLabelPrefix()}/${k}`] = v;
  }
}

function errorsText(errs: FieldError[]): string {
  return errs.map(fieldErrorMessage).join('\n');
}

/** Kubernetes' aggregate error text: the one message, or `[m1, m2]`. */
function aggregateText(errs: FieldError[]): string {
  const list = [...new Set(errs.map(fieldErrorMessage))];
  return list.length === 1 ? (list[0] ?? '') : `[${list.join(', ')}]`;
}

/** Only a change of containers or their images can change a pod's verdict (Kubernetes' isSignificantPodUpdate). */
export function isSignificantPodUpdate(pod: Pod, old: Pod): boolean {
  const changed = (a: Container[] = [], b: Container[] = []): boolean =>
    a.length !== b.length || a.some((c, i) => c.image !== b[i]?.image);
  if (changed(pod.spec?.containers, old.spec?.containers)) return true;
  if (changed(pod.spec?.initContainers, old.spec?.initContainers)) return true;
  const oldEphemeral = old.spec?.ephemeralContainers ?? [];
  return (pod.spec?.ephemeralContainers ?? []).some((c) => {
    const before = oldEphemeral.find((o) => o.name === c.name);
    return !before || before.image !== c.image;
  });
}

/** PodSecurity over the server's stores (namespaces and pods from the watch cache) and its configuration. */
export function newPodSecurity(c: AdmissionContext): PodSecurity {
  const pods = c.catalog.lookup('', 'v1', 'pods');
  return new PodSecurity({
    config: parsePodSecurityConfig(c.config('PodSecurity')),
    getNamespace: async (name) =>
      (await c.read({ group: '', version: 'v1', resource: 'namespaces' }, { namespace: '', name })) as
        Namespace | undefined,
    listPods: async (namespace) =>
      pods ? ((await c.storeFor(pods).list(namespace, { resourceVersion: '0' })).items as Pod[]) : [],
  });
}
