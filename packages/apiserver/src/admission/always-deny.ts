import type { Logger } from '@svc/component-base';
import type { AdmissionAttributes, AdmissionPlugin } from './admission.js';
import { admissionForbidden } from './admission-errors.js';

/** Kubernetes' words for every refusal. */
export const ALWAYS_DENY_MESSAGE = 'admission control is denying all modifications';

/**
 * Kubernetes' AlwaysDeny: refuses every request it sees (create, update, delete) in the mutating
 * phase already, with a 403 `<resource> "<name>" is forbidden: admission control is denying all
 * modifications`. Deprecated in Kubernetes, which logs so when the plugin is built; so does this one.
 */
export class AlwaysDeny implements AdmissionPlugin {
  readonly name = 'AlwaysDeny';

  constructor(log?: Logger) {
    log?.warn(
      `${this.name} admission controller is deprecated. Please remove this controller from your configuration files and scripts.`,
    );
  }

  async admit(a: AdmissionAttributes): Promise<void> {
    throw admissionForbidden(a, ALWAYS_DENY_MESSAGE);
  }

  async validate(a: AdmissionAttributes): Promise<void> {
    throw admissionForbidden(a, ALWAYS_DENY_MESSAGE);
  }
}
