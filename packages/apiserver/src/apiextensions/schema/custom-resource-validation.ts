/**
 * The whole validation of a custom resource's content as Kubernetes' customResourceStrategy runs
 * it after the store's ObjectMeta checks: schema value rules (ratcheted on update with
 * CRDValidationRatcheting), embedded resources, list uniqueness (on update only when the old
 * object had none), then the CEL rules, if the schema has any, unless an earlier error blocks
 * them (Unsupported, Required, Too long, Too many or a type error): then one error says the rules
 * were not checked.
 */
import { fieldErrors, type FieldError } from '@svc/api';
import { evaluateRules, hasRules } from './cel.js';
import { validateEmbeddedResources } from './embedded-meta.js';
import { validateListSetsAndMaps } from './list-type.js';
import { openApiErrors, openApiUpdateErrors } from './openapi-validation.js';
import type { JSONSchemaProps } from './types.js';

const BLOCKING = new Set([
  'FieldValueNotSupported',
  'FieldValueRequired',
  'FieldValueTooLong',
  'FieldValueTooMany',
  'FieldValueTypeInvalid',
]);

export interface CustomResourceInput {
  value: unknown;
  /** The stored object, on update. */
  old?: unknown;
  /** CRDValidationRatcheting (default on). */
  ratcheting?: boolean;
}

export function validateCustomResource(schema: JSONSchemaProps, input: CustomResourceInput): FieldError[] {
  const { value, old } = input;
  const ratcheting = input.ratcheting ?? true;
  const isUpdate = old !== undefined && old !== null;
  const errs =
    isUpdate && ratcheting ? openApiUpdateErrors(schema, { value, old }, '') : openApiErrors(schema, value, '');
  errs.push(...validateEmbeddedResources(schema, value, ''));
  if (!isUpdate || validateListSetsAndMaps(schema, old, '').length === 0) {
    errs.push(...validateListSetsAndMaps(schema, value, ''));
  }
  // As Kubernetes: the CEL validator exists only when some node has rules.
  if (!hasRules(schema)) return errs;
  if (errs.some((e) => BLOCKING.has(e.type))) {
    const detail =
      'some validation rules were not checked because the object was invalid; correct the existing errors to complete validation';
    return [...errs, fieldErrors.invalid('<nil>', null, detail)];
  }
  return [...errs, ...evaluateRules(schema, { value, old, ratcheting }, '')];
}
