import { fieldErrors, type FieldError, type Toleration } from '@svc/api';
import { validateQualifiedName, isValidLabelValue } from '@svc/machinery';

/** Tolerations compared as Kubernetes' semantic equality does (unset and empty alike). */
export function sameToleration(x: Toleration, y: Toleration): boolean {
  return (
    (x.key ?? '') === (y.key ?? '') &&
    (x.operator ?? '') === (y.operator ?? '') &&
    (x.value ?? '') === (y.value ?? '') &&
    (x.effect ?? '') === (y.effect ?? '') &&
    x.tolerationSeconds === y.tolerationSeconds
  );
}

/** Whether `ss` tolerates everything `t` does (Kubernetes' pkg/util/tolerations isSuperset). */
export function isSuperset(ss: Toleration, t: Toleration): boolean {
  if (sameToleration(ss, t)) return true;
  const ssKey = ss.key ?? '';
  // An empty key with Exists matches every key and value.
  if ((t.key ?? '') !== ssKey && (ssKey !== '' || ss.operator !== 'Exists')) return false;
  // An empty effect matches every effect.
  if ((t.effect ?? '') !== (ss.effect ?? '') && (ss.effect ?? '') !== '') return false;
  if (ss.effect === 'NoExecute' && ss.tolerationSeconds !== undefined) {
    if (t.tolerationSeconds === undefined || t.tolerationSeconds > ss.tolerationSeconds) return false;
  }
  switch (ss.operator ?? '') {
    case 'Equal':
    case '':
      return t.operator === 'Equal' && (t.value ?? '') === (ss.value ?? '');
    case 'Exists':
      return true;
    default:
      return false;
  }
}

/**
 * Kubernetes' MergeTolerations: `first` then `second`, without those another one covers (of two
 * equal ones, the first stays).
 */
export function mergeTolerations(first: readonly Toleration[], second: readonly Toleration[]): Toleration[] {
  const all = [...first, ...second];
  const merged: Toleration[] = [];
  all.forEach((t, i) => {
    if (merged.some((m) => isSuperset(m, t))) return;
    if (all.slice(i + 1).some((later) => !sameToleration(t, later) && isSuperset(later, t))) return;
    merged.push(t);
  });
  return merged;
}

/** Every toleration is covered by one of the whitelist (an empty whitelist allows all). */
export function verifyAgainstWhitelist(tolerations: readonly Toleration[], whitelist: readonly Toleration[]): boolean {
  if (whitelist.length === 0 || tolerations.length === 0) return true;
  return tolerations.every((t) => whitelist.some((w) => isSuperset(w, t)));
}

const EFFECTS = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'];

/** Kubernetes' ValidateTolerations, with its messages and paths. */
export function validateTolerations(tolerations: readonly Toleration[], path: string): FieldError[] {
  const errs: FieldError[] = [];
  tolerations.forEach((t, i) => {
    const at = `${path}[${i}]`;
    const key = t.key ?? '';
    const operator = t.operator ?? '';
    const value = t.value ?? '';
    const effect = t.effect ?? '';
    if (key !== '') errs.push(...validateQualifiedName(key, `${at}.key`));
    if (key === '' && operator !== 'Exists') {
      errs.push(
        fieldErrors.invalid(
          `${at}.operator`,
          operator,
          'operator must be Exists when `key` is empty, which means "match all values and all keys"',
        ),
      );
    }
    if (t.tolerationSeconds !== undefined && effect !== 'NoExecute') {
      errs.push(
        fieldErrors.invalid(`${at}.effect`, effect, "effect must be 'NoExecute' when `tolerationSeconds` is set"),
      );
    }
    switch (operator) {
      case 'Equal':
      case '': {
        const why = isValidLabelValue(value);
        if (why.length > 0) errs.push(fieldErrors.invalid(`${at}.operator`, value, why.join(';')));
        break;
      }
      case 'Exists':
        if (value !== '')
          errs.push(fieldErrors.invalid(`${at}.operator`, t, "value must be empty when `operator` is 'Exists'"));
        break;
      default:
        errs.push(fieldErrors.notSupported(`${at}.operator`, operator, ['Equal', 'Exists']));
    }
    if (effect !== '' && !EFFECTS.includes(effect))
      errs.push(fieldErrors.notSupported(`${at}.effect`, effect, EFFECTS));
  });
  return errs;
}
