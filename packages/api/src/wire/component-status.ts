import type { ApiObject } from '../types.js';

/** One condition of a ComponentStatus; Kubernetes only reports `Healthy`. */
export interface ComponentCondition {
  type: string;
  /** `True`, `False` or `Unknown`. */
  status: string;
  message?: string;
  error?: string;
}

/** core/v1 ComponentStatus (read-only, deprecated in v1.19+): a component's health as the API server probed it. */
export interface ComponentStatus extends ApiObject {
  conditions?: ComponentCondition[];
}
