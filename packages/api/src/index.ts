export * from './names.js';
export * from './types.js';
export * from './wire/index.js';
export * from './wire/audit.js';
export * from './wire/autoscaling.js';
export * from './errors.js';
export * from './field-errors.js';
export * from './schema.js';
export * from './meta-schema.js';
export * from './catalog.js';
export { builtinResources, builtinCatalog } from './resources/index.js';
export { tokenRequest, type SubresourceKind } from './resources/authentication/v1/token-request.js';
export { bindingKind } from './resources/core/v1/binding.js';
export { evictionKind } from './resources/policy/v1/pod-disruption-budget.js';
export { eventFromCore, eventToCore } from './resources/events/v1/event.js';
export { scaleKind } from './resources/autoscaling/v1/scale.js';
export {
  DEFAULT_CPU_UTILIZATION,
  hpaAnnotation,
  hpaV1ToV2,
  hpaV2ToV1,
} from './resources/autoscaling/v1/hpa-conversion.js';
export { hpaTargetsCell } from './resources/autoscaling/v2/horizontal-pod-autoscaler.js';
export * from './table-format.js';
export * from './table-columns.js';
export * from './kube-version.js';
