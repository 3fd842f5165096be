/**
 * Every error Kubernetes reports for a CRD version's `openAPIV3Schema`, in its order: the root
 * checks, the structural errors or else the errors of the defaults, the OpenAPI schema checks,
 * then the CEL compilation errors. As Kubernetes, rules are compiled only when the schema is
 * structural with valid defaults, and not for a node with schema errors at or below it.
 */
import type { FieldError } from '@svc/api';
import { celErrors } from './cel.js';
import { schemaErrorParts, type StructuralOptions } from './structural.js';
import { structuralConversionError } from './structural-conversion.js';
import type { JSONSchemaProps } from './types.js';

export function crdSchemaErrors(schema: JSONSchemaProps, path: string, opts: StructuralOptions = {}): FieldError[] {
  const p = schemaErrorParts(schema, path, opts);
  const errs = [...p.root, ...p.structural, ...p.checks, ...p.conversion];
  if (p.structural.length > 0 || structuralConversionError(schema)) return errs;
  const below = (nodePath: string) =>
    p.checks.some((e) => e.path === nodePath || e.path.startsWith(`${nodePath}.`) || e.path.startsWith(`${nodePath}[`));
  return [...errs, ...celErrors(schema, path, below)];
}
