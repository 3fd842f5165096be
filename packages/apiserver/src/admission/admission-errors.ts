import { StatusError, statusError, type StatusDetails } from '@svc/api';
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

/**
 * What Kubernetes answers for an error that is not a Status (a plugin's plain `fmt.Errorf`): a
 * 500 whose message is the error's text, with no reason (kubectl prints `Error from server: <text>`).
 */
export function plainError(message: string): StatusError {
  return new StatusError({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, code: 500 });
}

/** Go's utilerrors aggregate text: distinct messages, bracketed and comma-separated when more than one. */
export function aggregateMessage(messages: readonly string[]): string {
  const distinct = [...new Set(messages)];
  return distinct.length === 1 ? (distinct[0] ?? '') : `[${distinct.join(', ')}]`;
}
