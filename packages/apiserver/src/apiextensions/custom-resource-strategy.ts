import { forbidden, type ApiObject, type FieldError, type ResourceType } from '@svc/api';
import type { Strategy } from '../registry/strategy.js';
import { deepEqual } from '../registry/object-utils.js';
import { applyDefaults, validateCustomResource, type JSONSchemaProps } from './schema/index.js';

const strategies = new WeakMap<ResourceType, Strategy>();

/** Feature gates the custom resource strategy honours. */
export interface CustomResourceGates {
  /** CRDValidationRatcheting (beta, on): an unchanged invalid value does not fail an update. */
  ratcheting: boolean;
}

/**
 * The strategy of a custom resource type (Kubernetes' customResourceStrategy): defaults from
 * the schema on create and update; with a status subresource, creates drop `status` (the
 * store keeps it on main-resource updates and keeps everything else on status updates);
 * `metadata.generation` moves when anything but metadata and status changes; the object is
 * validated against the version's OpenAPI schema and its CEL rules (transition rules and
 * ratcheting on update).
 */
export function customResourceStrategy(r: ResourceType, gates: CustomResourceGates): Strategy {
  let s = strategies.get(r);
  if (!s) {
    s = build(r, gates);
    strategies.set(r, s);
  }
  return s;
}

function build(r: ResourceType, gates: CustomResourceGates): Strategy {
  const schema = r.custom?.openApiSchema as JSONSchemaProps | undefined;
  const hasStatus = r.subresources.includes('status');
  return {
    allowUnconditionalUpdate: false,
    prepareForCreate(obj) {
      if (r.custom?.terminating) {
        const what = `${r.plural}.${r.group}`;
        throw forbidden(
          `${what} "${obj.metadata.name ?? ''}" is forbidden: create not allowed while custom resource definition is terminating`,
        );
      }
      if (hasStatus) delete obj.status;
      if (schema) applyDefaults(schema, obj);
    },
    prepareForUpdate(obj, old) {
      if (schema) applyDefaults(schema, obj);
      const m = obj.metadata;
      if (!deepEqual(withoutMetaAndStatus(obj), withoutMetaAndStatus(old)))
        m.generation = (old.metadata.generation ?? 0) + 1;
    },
    prepareForStatusUpdate(obj) {
      if (schema) applyDefaults(schema, obj);
    },
    validate(obj): FieldError[] {
      return schema ? validateCustomResource(schema, { value: obj }) : [];
    },
    validateUpdate(obj, old): FieldError[] {
      return schema ? validateCustomResource(schema, { value: obj, old, ratcheting: gates.ratcheting }) : [];
    },
  };
}

function withoutMetaAndStatus(o: ApiObject): Record<string, unknown> {
  const { metadata: _m, status: _s, apiVersion: _a, kind: _k, ...rest } = o;
  return rest;
}
