import { nodeTaintKey, type Toleration } from '@svc/api';
import type { AdmissionAttributes, AdmissionPlugin } from './admission.js';

/** Kubernetes' defaults for `--default-not-ready-toleration-seconds` and `--default-unreachable-toleration-seconds`. */
export const DEFAULT_TOLERATION_SECONDS = 300;

/**
 * Kubernetes' DefaultTolerationSeconds: a pod written (create or update, not a subresource)
 * without a toleration for the NoExecute `not-ready` / `unreachable` node taints gets one
 * (`Exists`, `--default-not-ready-toleration-seconds` / `--default-unreachable-toleration-seconds`,
 * 300 s by default) for each, so taint-based eviction waits that long. A toleration with an
 * empty key or an empty effect counts as tolerating, as in Kubernetes.
 */
export class DefaultTolerationSeconds implements AdmissionPlugin {
  readonly name = 'DefaultTolerationSeconds';

  constructor(
    private readonly seconds: { notReady: number; unreachable: number } = {
      notReady: DEFAULT_TOLERATION_SECONDS,
      unreachable: DEFAULT_TOLERATION_SECONDS,
    },
  ) {}

  async admit(a: AdmissionAttributes): Promise<void> {
    if (a.resource.group !== '' || a.resource.plural !== 'pods' || a.subresource !== '') return;
    if ((a.operation !== 'CREATE' && a.operation !== 'UPDATE') || !a.object) return;
    const spec = (a.object.spec ??= {}) as { tolerations?: Toleration[] };
    const tolerations = spec.tolerations ?? [];
    const tolerates = (key: string): boolean =>
      tolerations.some((t) => (!t.key || t.key === key) && (!t.effect || t.effect === 'NoExecute'));
    const added: Toleration[] = [];
    for (const [key, seconds] of [
      [nodeTaintKey('not-ready'), this.seconds.notReady],
      [nodeTaintKey('unreachable'), this.seconds.unreachable],
    ] as const) {
      if (!tolerates(key)) added.push({ key, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: seconds });
    }
    if (added.length > 0) spec.tolerations = [...tolerations, ...added];
  }
}
