import { isIPv4, isIPv6 } from 'node:net';
import { fieldErrors, type ApiObject, type FieldError } from '@svc/api';
import type { Strategy } from '../strategy.js';

interface NodeSpec {
  podCIDR?: string;
  podCIDRs?: string[];
}

const specOf = (o: ApiObject): NodeSpec => (o.spec ?? {}) as NodeSpec;

/**
 * The node's pod CIDRs as Kubernetes' v1 conversion reads them: `podCIDRs`, or a one-entry list
 * of `podCIDR` when only that is set.
 */
function podCidrsOf(o: ApiObject): string[] {
  const spec = specOf(o);
  if ((spec.podCIDRs ?? []).length > 0) return spec.podCIDRs ?? [];
  return spec.podCIDR ? [spec.podCIDR] : [];
}

/** The address family of a CIDR (Go's net.ParseCIDR accepts it), or undefined. */
function cidrFamily(s: string): 4 | 6 | undefined {
  const m = /^([^/]+)\/(\d{1,3})$/.exec(s);
  if (!m) return undefined;
  const prefix = Number(m[2]);
  if (isIPv4(m[1] as string)) return prefix <= 32 ? 4 : undefined;
  if (isIPv6(m[1] as string)) return prefix <= 128 ? 6 : undefined;
  return undefined;
}

/** Kubernetes' ValidateNode for `spec.podCIDRs`: valid CIDRs, at most one per family. */
function validatePodCidrs(obj: ApiObject): FieldError[] {
  const cidrs = podCidrsOf(obj);
  const errs: FieldError[] = [];
  const families: Array<4 | 6> = [];
  cidrs.forEach((c, i) => {
    const family = cidrFamily(c);
    if (family === undefined)
      errs.push(
        fieldErrors.invalid(
          `spec.podCIDRs[${i}]`,
          c,
          'must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)',
        ),
      );
    else families.push(family);
  });
  if (errs.length === 0 && cidrs.length > 1 && (cidrs.length > 2 || families[0] === families[1]))
    errs.push(fieldErrors.invalid('spec.podCIDRs', cidrs, 'may specify no more than one CIDR for each IP family'));
  return errs;
}

/**
 * Kubernetes' ValidateNodeUpdate for the pod CIDRs: once a node has podCIDRs they may not change
 * (the controller manager's node-ipam sets them once, from "" to a value).
 */
function validatePodCidrsUpdate(obj: ApiObject, old: ApiObject): FieldError[] {
  const before = podCidrsOf(old);
  if (before.length === 0) return [];
  const after = podCidrsOf(obj);
  const forbidden = (): FieldError =>
    fieldErrors.forbidden('spec.podCIDRs', 'node updates may not change podCIDR except from "" to valid');
  if (before.length !== after.length) return [forbidden()];
  return before.filter((c, i) => c !== after[i]).map(forbidden);
}

/** core/v1 Node: the pod CIDRs valid, and set once. */
export const nodeStrategy: Strategy = {
  allowUnconditionalUpdate: true,
  validate: (obj) => validatePodCidrs(obj),
  validateUpdate: (obj, old) => [...validatePodCidrs(obj), ...validatePodCidrsUpdate(obj, old)],
};
