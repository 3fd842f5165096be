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
}

/** One admission plugin: `admit` may mutate `attrs.object`; `validate` only accepts or throws a Status error. */
export interface AdmissionPlugin {
  readonly name: string;
  admit?(attrs: AdmissionAttributes): Promise<void>;
  validate?(attrs: AdmissionAttributes): Promise<void>;
}

/**
 * The admission chain: every plugin's `admit` in order (the mutating phase), then every
 * plugin's `validate` in order (the validating phase); the first error ends the request.
 */
export class Admission {
  constructor(private readonly plugins: readonly AdmissionPlugin[]) {}

  async admit(attrs: AdmissionAttributes): Promise<void> {
    for (const p of this.plugins) await p.admit?.(attrs);
  }

  async validate(attrs: AdmissionAttributes): Promise<void> {
    for (const p of this.plugins) await p.validate?.(attrs);
  }

  names(): string[] {
    return this.plugins.map((p) => p.name);
  }
}
