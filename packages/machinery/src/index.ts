/** @svc/machinery: pure algorithms shared by the server and its clients. No I/O. */
export { parseDuration, parseDurationNs, formatDuration, formatDurationNs } from './durations.js';
export {
  utf8Length,
  maxLenError,
  emptyError,
  regexError,
  DNS1123_LABEL_MAX_LENGTH,
  DNS1123_SUBDOMAIN_MAX_LENGTH,
  DNS1035_LABEL_MAX_LENGTH,
  QUALIFIED_NAME_MAX_LENGTH,
  LABEL_VALUE_MAX_LENGTH,
  TOTAL_ANNOTATION_SIZE_LIMIT,
  isDns1123Label,
  isDns1123Subdomain,
  isDns1035Label,
  isQualifiedName,
  isValidLabelValue,
  isConfigMapKey,
  isValidPathSegmentName,
  isValidPathSegmentPrefix,
  validateDnsSubdomain,
  validateDnsLabel,
  validateDns1035Label,
  validatePathSegmentName,
  validateQualifiedName,
  validateLabelValue,
  validateConfigMapKey,
  validateLabels,
  validateAnnotations,
  maskTrailingDash,
  nameIsDnsSubdomain,
  nameIsDnsLabel,
  nameIsDns1035Label,
  nameIsPathSegment,
  validateGenerateName,
  type NameValidator,
} from './validation.js';
export { LabelSelector, type SelectorOperator, type Requirement, type Labels } from './label-selector.js';
export { parseLabelSelector } from './label-selector-parser.js';
export {
  labelSelectorFromObject,
  validateLabelSelector,
  type LabelSelectorRequirement,
  type LabelSelectorObject,
} from './label-selector-object.js';
export {
  FieldSelector,
  parseFieldSelector,
  exactMetadataName,
  escapeFieldValue,
  unescapeFieldValue,
  type FieldOperator,
  type FieldRequirement,
  type FieldGetter,
} from './field-selector.js';
export { applyMergePatch, cloneJson, isJsonObject, setOwn, type JsonObject } from './merge-patch.js';
export {
  applyJsonPatch,
  parseJsonPatch,
  JsonPatchFailed,
  JsonPatchTestFailed,
  type JsonPatchOperation,
} from './json-patch.js';
export { parseGoBool, isGoTrue } from './go-flags.js';
export {
  FeatureGates,
  API_SERVER_GATES,
  BINARY_VERSION,
  EMULATABLE_VERSIONS,
  componentFeatureGates,
  featuresAt,
  featuresAfter,
  parseEmulatedVersion,
  type FeatureStage,
  type FeatureSpec,
  type FeatureGatesOptions,
  type ComponentFeatureGatesOptions,
} from './feature-gates.js';
export { SVC_FEATURE_GATES, type VersionedFeature, type VersionedSpec } from './feature-gate-table.js';
export {
  parseRuntimeConfig,
  isEnabled,
  groupVersionKey,
  resourceKey,
  type EnablementQuery,
  type RuntimeConfig,
  type StabilitySelector,
} from './runtime-config.js';
export {
  checkSchema,
  pruneUnknownFields,
  isRfc3339DateTime,
  isBase64,
  jsonTypeOf,
  type SchemaCheckResult,
  type PruneResult,
  nullListItemsAsEmptyObjects,
} from './schema-check.js';
export { jsonEqual, compareJson, canonicalJson } from './json-compare.js';
export { withoutZeroValues } from './zero-values.js';
export { applyStrategicMergePatch } from './strategic-merge-patch.js';
export {
  fieldElement,
  keyElement,
  valueElement,
  indexElement,
  parseElement,
  compareElements,
  elementString,
  pathString,
  type PathElement,
  type FieldPath,
  type ParsedElement,
} from './field-path.js';
export { FieldSet } from './field-set.js';
export {
  fieldSetOf,
  rawFieldSetOf,
  trackedFields,
  ensureNamedFieldsAreMembers,
  reconcileWithSchema,
  type TrackingOptions,
} from './field-set-of.js';
export { compareValues, type Comparison } from './typed-compare.js';
export { mergeApplied, removeFields } from './typed-merge.js';
export {
  decodeManagedFields,
  tryDecodeManagedFields,
  encodeManagedFields,
  compareManagedFieldsEntries,
  capUpdateManagers,
  managedFieldsBase,
  isResetManagedFields,
  managerFromUserAgent,
  withoutManagedFields,
  setManagedFields,
  managerKey,
  DEFAULT_MAX_UPDATE_MANAGERS,
  ANCIENT_CHANGES_MANAGER,
  FIELD_MANAGER_MAX_LENGTH,
  type ManagedOperation,
  type ManagerFields,
  type ManagedSets,
  type ManagedFieldsBase,
} from './managed-fields.js';
export { applyConflictError, conflictManagerName, type ApplyConflict } from './apply-conflict.js';
export { defaultClientSideApplyManagers } from './last-applied.js';
export { applyPatch, BEFORE_FIRST_APPLY_MANAGER, type ApplyOptions, type ApplyResult } from './apply.js';
export { updateManagedFields, type UpdateManagedFieldsOptions } from './managed-fields-update.js';
export {
  decodeEnvelope,
  decodeMessage,
  decodeProtobufObject,
  decodeWatchFrames,
  PROTOBUF_MAGIC,
  type ProtobufEnvelope,
} from './protobuf.js';
export {
  encodeEnvelope,
  encodeMessage,
  encodeProtobufList,
  encodeProtobufObject,
  encodeProtobufStatus,
  encodeWatchEventFrame,
  listSchemaOf,
  NotEncodable,
  type EnvelopeType,
  statusSchema,
} from './protobuf-encode.js';
export { duplicateJsonFields } from './duplicate-fields.js';
export { MAX_NESTING_DEPTH, jsonNestingExceeds, valueNestingDepth } from './nesting-depth.js';
export * from './bootstrap-token.js';
export {
  aggregateClusterRoleRules,
  policyRuleEqual,
  policyRulesEqual,
  type AggregatedPolicyRule,
} from './clusterrole-aggregation.js';
export { quantityValue, quantityMilliValue, QuantityError } from './quantity.js';
export { defaultPodSpec, type DefaultablePodSpec, type DefaultableContainer } from './pod-defaults.js';
export { sleep } from './sleep.js';
export { Quantity, canonicalQuantity, type QuantityFormat } from './quantity-math.js';
export * from './resource-names.js';
export * from './pod-resources.js';
export * from './resource-quota.js';
export { parseCronSchedule, isKnownTimeZone, wallClock, type CronSchedule } from './cron-schedule.js';
export { podMatchesNode, matchesTerm, preferredAffinityWeight } from './node-affinity.js';
export { ipToBigInt, formatIp } from './ip-address.js';
