import type { Logger } from '@svc/component-base';
import type { AdmissionPlugin } from './admission.js';

/**
 * Kubernetes' AlwaysAdmit: admits every request in both phases. Deprecated in Kubernetes, which
 * logs so when the plugin is built; so does this one.
 */
export class AlwaysAdmit implements AdmissionPlugin {
  readonly name = 'AlwaysAdmit';

  constructor(log?: Logger) {
    log?.warn(
      `${this.name} admission controller is deprecated. Please remove this controller from your configuration files and scripts.`,
    );
  }

  async admit(): Promise<void> {
    // Admits everything.
  }

  async validate(): Promise<void> {
    // Admits everything.
  }
}
