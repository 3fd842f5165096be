import { isIP } from 'node:net';
import {
  fieldErrors,
  type ApiObject,
  type FieldError,
  type IPBlock,
  type NetworkPolicyPeer,
  type NetworkPolicyPort,
  type NetworkPolicySpec,
} from '@svc/api';
import { ipToBigInt, validateLabelSelector } from '@svc/machinery';
import type { Strategy } from '../strategy.js';
import { isValidPortName } from './ingress.js';

const PROTOCOLS = ['TCP', 'UDP', 'SCTP'];
const POLICY_TYPES = ['Ingress', 'Egress'];

const specOf = (o: ApiObject): NetworkPolicySpec => (o.spec ??= {}) as NetworkPolicySpec;

/** Kubernetes' SetDefaults_NetworkPolicy and _NetworkPolicyPort: TCP ports; policyTypes from the rules given. */
function defaults(obj: ApiObject): void {
  const s = specOf(obj);
  for (const rule of [...(s.ingress ?? []), ...(s.egress ?? [])])
    for (const p of rule.ports ?? []) p.protocol ??= 'TCP';
  if ((s.policyTypes ?? []).length === 0) s.policyTypes = s.egress?.length ? ['Ingress', 'Egress'] : ['Ingress'];
}

const portNumberErrors = (path: string, n: number): FieldError[] =>
  Number.isInteger(n) && n >= 1 && n <= 65535
    ? []
    : [fieldErrors.invalid(path, n, 'must be between 1 and 65535, inclusive')];

/** Kubernetes' ValidateNetworkPolicyPort. */
function validatePort(p: NetworkPolicyPort, path: string): FieldError[] {
  const errs: FieldError[] = [];
  if (p.protocol !== undefined && !PROTOCOLS.includes(p.protocol))
    errs.push(fieldErrors.notSupported(`${path}.protocol`, p.protocol, PROTOCOLS));
  if (p.port === undefined) {
    if (p.endPort !== undefined)
      errs.push(fieldErrors.invalid(`${path}.endPort`, p.endPort, 'may not be specified when `port` is not specified'));
  } else if (typeof p.port === 'number') {
    errs.push(...portNumberErrors(`${path}.port`, p.port));
    if (p.endPort !== undefined) {
      if (p.endPort < p.port)
        errs.push(fieldErrors.invalid(`${path}.endPort`, p.port, 'must be greater than or equal to `port`'));
      errs.push(...portNumberErrors(`${path}.endPort`, p.endPort));
    }
  } else {
    if (p.endPort !== undefined)
      errs.push(fieldErrors.invalid(`${path}.endPort`, p.endPort, 'may not be specified when `port` is non-numeric'));
    for (const m of isValidPortName(p.port)) errs.push(fieldErrors.invalid(`${path}.port`, p.port, m));
  }
  return errs;
}

interface Cidr {
  family: 4 | 6;
  network: bigint;
  bits: number;
}

/** A CIDR as Go's net.ParseCIDR reads it (the network address, host bits dropped); undefined when it is not one. */
function parseCidr(text: string): Cidr | undefined {
  const slash = text.indexOf('/');
  if (slash < 0) return undefined;
  const ip = text.slice(0, slash);
  const prefix = text.slice(slash + 1);
  const family = isIP(ip);
  if (family === 0 || !/^[0-9]{1,3}$/.test(prefix)) return undefined;
  const width = family === 4 ? 32 : 128;
  const bits = Number(prefix);
  const value = ipToBigInt(ip);
  if (bits > width || value === undefined) return undefined;
  const host = BigInt(width - bits);
  return { family: family === 4 ? 4 : 6, network: (value >> host) << host, bits };
}

/** Kubernetes' ValidateIPBlock: `cidr` a CIDR, each `except` a strict subset of it. */
function validateIpBlock(b: IPBlock, path: string): FieldError[] {
  if (!b.cidr) return [fieldErrors.required(`${path}.cidr`, '')];
  const cidr = parseCidr(b.cidr);
  if (!cidr) return [fieldErrors.invalid(`${path}.cidr`, b.cidr, 'not a valid CIDR')];
  const errs: FieldError[] = [];
  for (const [i, text] of (b.except ?? []).entries()) {
    const p = `${path}.except[${i}]`;
    const except = parseCidr(text);
    if (!except) return [...errs, fieldErrors.invalid(p, text, 'not a valid CIDR')];
    const width = cidr.family === 4 ? 32 : 128;
    const inside =
      except.family === cidr.family &&
      except.network >> BigInt(width - cidr.bits) === cidr.network >> BigInt(width - cidr.bits);
    if (!inside || cidr.bits >= except.bits)
      errs.push(fieldErrors.invalid(p, text, 'must be a strict subset of `cidr`'));
  }
  return errs;
}

/** Kubernetes' ValidateNetworkPolicyPeer: at least one selector or block, a block alone. */
function validatePeer(peer: NetworkPolicyPeer, path: string): FieldError[] {
  const errs: FieldError[] = [];
  let peers = 0;
  if (peer.podSelector) {
    peers++;
    errs.push(...validateLabelSelector(peer.podSelector, `${path}.podSelector`));
  }
  if (peer.namespaceSelector) {
    peers++;
    errs.push(...validateLabelSelector(peer.namespaceSelector, `${path}.namespaceSelector`));
  }
  if (peer.ipBlock) {
    peers++;
    errs.push(...validateIpBlock(peer.ipBlock, `${path}.ipBlock`));
  }
  if (peers === 0) errs.push(fieldErrors.required(path, 'must specify a peer'));
  else if (peers > 1 && peer.ipBlock)
    errs.push(fieldErrors.forbidden(path, 'may not specify both ipBlock and another peer'));
  return errs;
}

/** Kubernetes' ValidateNetworkPolicySpec. */
function validate(obj: ApiObject): FieldError[] {
  const s = specOf(obj);
  const errs = [...validateLabelSelector(s.podSelector, 'spec.podSelector')];
  (s.ingress ?? []).forEach((rule, i) => {
    (rule.ports ?? []).forEach((p, j) => errs.push(...validatePort(p, `spec.ingress[${i}].ports[${j}]`)));
    (rule.from ?? []).forEach((p, j) => errs.push(...validatePeer(p, `spec.ingress[${i}].from[${j}]`)));
  });
  (s.egress ?? []).forEach((rule, i) => {
    (rule.ports ?? []).forEach((p, j) => errs.push(...validatePort(p, `spec.egress[${i}].ports[${j}]`)));
    (rule.to ?? []).forEach((p, j) => errs.push(...validatePeer(p, `spec.egress[${i}].to[${j}]`)));
  });
  const types = s.policyTypes ?? [];
  if (types.length > POLICY_TYPES.length)
    return [...errs, fieldErrors.invalid('spec.policyTypes', types, 'may not specify more than two policyTypes')];
  types.forEach((t, i) => {
    if (!POLICY_TYPES.includes(t)) errs.push(fieldErrors.notSupported(`spec.policyTypes[${i}]`, t, POLICY_TYPES));
  });
  return errs;
}

/** networking/v1 NetworkPolicy (Kubernetes' networkPolicyStrategy): defaults on every write, the spec validated. */
export const networkPolicyStrategy: Strategy = {
  prepareForCreate: defaults,
  prepareForUpdate: (obj) => defaults(obj),
  validate,
  validateUpdate: (obj) => validate(obj),
};
