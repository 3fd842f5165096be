import type { ApiObject } from '../types.js';
import type { PodTemplateSpec } from './pod.js';

/** core/v1 PodTemplate: a named pod template (no spec, no status). */
export interface PodTemplate extends ApiObject {
  template: PodTemplateSpec;
}
