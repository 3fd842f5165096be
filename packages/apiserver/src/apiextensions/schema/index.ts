/**
 * The schema engine of CustomResourceDefinitions: the OpenAPI schema type, Kubernetes'
 * structural-schema and CRD schema checks, conversion to our schema DSL, value validation with
 * ratcheting, defaulting, and CEL validation rules.
 */
export {
  ext,
  extKey,
  type ExtensionName,
  type ExternalDocumentation,
  type JSONSchemaProps,
  type SchemaExtensions,
  type ValidationRule,
} from './types.js';
export { structuralErrors, type StructuralOptions } from './structural.js';
export { crdSchemaErrors } from './crd-schema.js';
export { celErrors, evaluateRules, type RuleInput } from './cel.js';
export { toDslSchema } from './convert.js';
export { validateValue, validateUpdate } from './validate.js';
export { validateCustomResource, type CustomResourceInput } from './custom-resource-validation.js';
export { applyDefaults } from './defaulting.js';
export { pruneUnknownFields } from './prune.js';
export { ruleFieldPath, type RuleFieldPath } from './rule-field-path.js';
// The CEL environment, declared types and values, for ValidatingAdmissionPolicy (admission/policy/).
export { celBaseEnvironment, celEqual, rewriteHas } from './cel-library.js';
export { CelTypes, escapeName } from './cel-types.js';
export { toCelValue } from './cel-values.js';
export { formatIssue as formatCelIssue, type CelIssue } from './cel-compile.js';
