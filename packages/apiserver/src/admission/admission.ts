import type { ApiObject, ResourceType } from '@svc/api';
import type { UserInfo } from '@svc/component-base';

export interface AdmissionAttributes {
  operation: 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';
  resource: ResourceType;
  subresource: string;
  namespace: string;
  name: string;
  /** The new object (CREATE, UPDATE). */
  object?: ApiObject;
  /** The stored object (UPDATE, DELETE). */
  oldObject?: ApiObject;
  dryRun: boolean;
  user?: UserInfo;
  /** Warnings for the client (sent as `Warning: 299` headers); plugins and webhooks append. */
  warnings: string[];
  /** Audit annotations (`key` → value) for the request's audit event. */
  annotations: Record<string, string>;
  /** Set by `Admission.admit` for the mutating phase. */
  reinvocation?: ReinvocationContext;
}

/**
 * Kubernetes' reinvocation context, one per mutating phase: a plugin that changed the object
 * in a way earlier plugins should see sets `shouldReinvoke`, and the whole mutating chain runs
 * once more (`isReinvoke`). Plugins keep their own state under their name in `values`.
 */
export interface ReinvocationContext {
  isReinvoke: boolean;
  shouldReinvoke: boolean;
  values: Map<string, unknown>;
}

/** One phase of the chain, timed (`apiserver_admission_step_admission_duration_seconds`). */
export interface AdmissionStep {
  type: 'admit' | 'validate';
  operation: AdmissionAttributes['operation'];
  rejected: boolean;
  seconds: number;
}

/** One admission plugin: `admit` may mutate `attrs.object`; `validate` only accepts or throws a Status error. */
export interface AdmissionPlugin {
  readonly name: string;
  admit?(attrs: AdmissionAttributes): Promise<void>;
  validate?(attrs: AdmissionAttributes): Promise<void>;
}

/**
 * The admission chain: every plugin's `admit` in order (the mutating phase, run a second time
 * when a plugin asks for reinvocation), then every plugin's `validate` in order (the validating
 * phase); the first error ends the request. Each phase is timed for `observe`.
 */
export class Admission {
  constructor(
    private readonly plugins: readonly AdmissionPlugin[],
    private readonly observe: (step: AdmissionStep) => void = () => undefined,
  ) {}

  async admit(attrs: AdmissionAttributes): Promise<void> {
    const started = performance.now();
    let rejected = true;
    try {
      const r = (attrs.reinvocation ??= { isReinvoke: false, shouldReinvoke: false, values: new Map() });
      for (const p of this.plugins) await p.admit?.(attrs);
      if (r.shouldReinvoke) {
        r.isReinvoke = true;
        for (const p of this.plugins) await p.admit?.(attrs);
      }
      rejected = false;
    } finally {
      const seconds = (performance.now() - started) / 1000;
      this.observe({ type: 'admit', operation: attrs.operation, rejected, seconds });
    }
  }

  async validate(attrs: AdmissionAttributes): Promise<void> {
    const started = performance.now();
    let rejected = true;
    try {
      for (const p of this.plugins) await p.validate?.(attrs);
      rejected = false;
    } finally {
      const seconds = (performance.now() - started) / 1000;
      this.observe({ type: 'validate', operation: attrs.operation, rejected, seconds });
    }
  }

  names(): string[] {
    return this.plugins.map((p) => p.name);
  }
}
