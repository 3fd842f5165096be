import type { Crd, CrdCondition, CrdNames } from './crd.js';

export interface NamingResult {
  acceptedNames: CrdNames;
  namesAccepted: Omit<CrdCondition, 'lastTransitionTime'>;
  established: Omit<CrdCondition, 'lastTransitionTime'>;
}

/**
 * Kubernetes' naming controller for one CRD: each requested name (plural, singular, short
 * names; kind and list kind) is accepted when it is already this CRD's or no other CRD of the
 * group has accepted it; a conflict keeps the old accepted name and makes NamesAccepted False
 * (`PluralConflict`, `SingularConflict`, `ShortNamesConflict`, `KindConflict`,
 * `ListKindConflict`: `"<name>" is already in use`). Established stays as it is once True;
 * before that it is False (`NotAccepted`, or `Installing` once every name is accepted).
 */
export function calculateNames(crd: Crd, all: Iterable<Crd>): NamingResult {
  const resources = new Set<string>();
  const kinds = new Set<string>();
  for (const other of all) {
    if (other.spec.group !== crd.spec.group) continue;
    const a = other.status?.acceptedNames;
    if (!a) continue;
    for (const n of [a.plural, a.singular, ...(a.shortNames ?? [])]) if (n) resources.add(n);
    for (const n of [a.kind, a.listKind]) if (n) kinds.add(n);
  }
  const requested = withDefaults(crd.spec.names);
  const accepted: Partial<CrdNames> = crd.status?.acceptedNames ?? {};
  const next: CrdNames = { plural: accepted.plural ?? '', kind: accepted.kind ?? '', ...accepted };
  let conflict: { reason: string; message: string } | undefined;
  const check = (o: {
    requested: string;
    accepted: string | undefined;
    used: Set<string>;
    reason: string;
  }): boolean => {
    if (o.requested === o.accepted || !o.used.has(o.requested)) return true;
    conflict = { reason: o.reason, message: `"${o.requested}" is already in use` };
    return false;
  };
  if (check({ requested: requested.plural, accepted: accepted.plural, used: resources, reason: 'PluralConflict' }))
    next.plural = requested.plural;
  const singular = requested.singular ?? '';
  if (check({ requested: singular, accepted: accepted.singular, used: resources, reason: 'SingularConflict' }))
    next.singular = singular;
  if (!sameList(requested.shortNames, accepted.shortNames)) {
    const mine = new Set(accepted.shortNames ?? []);
    const taken = (requested.shortNames ?? []).filter((n) => !mine.has(n) && resources.has(n));
    if (taken.length > 0) {
      conflict = { reason: 'ShortNamesConflict', message: taken.map((n) => `"${n}" is already in use`).join(', ') };
      if (taken.length > 1) conflict.message = `[${conflict.message}]`;
    } else next.shortNames = requested.shortNames;
  }
  if (check({ requested: requested.kind, accepted: accepted.kind, used: kinds, reason: 'KindConflict' }))
    next.kind = requested.kind;
  const listKind = requested.listKind ?? '';
  if (check({ requested: listKind, accepted: accepted.listKind, used: kinds, reason: 'ListKindConflict' }))
    next.listKind = listKind;
  next.categories = requested.categories;
  for (const k of Object.keys(next) as (keyof CrdNames)[]) if (next[k] === undefined) delete next[k];

  const namesAccepted = conflict
    ? { type: 'NamesAccepted', status: 'False', ...conflict }
    : { type: 'NamesAccepted', status: 'True', reason: 'NoConflicts', message: 'no conflicts found' };
  const old = crd.status?.conditions?.find((c) => c.type === 'Established');
  let established: Omit<CrdCondition, 'lastTransitionTime'> = old ?? {
    type: 'Established',
    status: 'False',
    reason: 'NotAccepted',
    message: 'not all names are accepted',
  };
  if (established.status !== 'True' && !conflict) {
    established = {
      type: 'Established',
      status: 'False',
      reason: 'Installing',
      message: 'the initial names have been accepted',
    };
  }
  return { acceptedNames: next, namesAccepted, established };
}

/** The names as defaulted by Kubernetes: singular = lowercased kind, list kind = `<Kind>List`. */
export function withDefaults(n: CrdNames): CrdNames {
  return { ...n, singular: n.singular || n.kind.toLowerCase(), listKind: n.listKind || `${n.kind}List` };
}

function sameList(a: readonly string[] | undefined, b: readonly string[] | undefined): boolean {
  const x = a ?? [];
  const y = b ?? [];
  return x.length === y.length && x.every((v, i) => v === y[i]);
}
