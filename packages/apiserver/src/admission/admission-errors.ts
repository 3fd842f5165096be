import { statusError, type StatusDetails, type StatusError } from '@svc/api';
import type { AdmissionAttributes } from './admission.js';

/**
 * Kubernetes' admission.NewForbidden: a 403 `pods "x" is forbidden: <why>` (`pods is
 * forbidden: ...` while the object has no name yet), with the resource in the details.
 */
export function admissionForbidden(a: AdmissionAttributes, why: string): StatusError {
  const r = a.resource;
  const what = r.group ? `${r.plural}.${r.group}` : r.plural;
  const name = a.name || (a.object ?? a.oldObject)?.metadata.name || '';
  const details: StatusDetails = { kind: r.plural };
  if (r.group) details.group = r.group;
  if (name) details.name = name;
  return statusError(
    'Forbidden',
    name ? `${what} "${name}" is forbidden: ${why}` : `${what} is forbidden: ${why}`,
    details,
  );
}
