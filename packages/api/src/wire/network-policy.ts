import type { ApiObject } from '../types.js';
import type { LabelSelectorObject as LabelSelector } from './meta.js';

export interface NetworkPolicyPort {
  /** TCP (default), UDP or SCTP. */
  protocol?: string;
  port?: number | string;
  endPort?: number;
}

export interface IPBlock {
  cidr: string;
  except?: string[];
}

export interface NetworkPolicyPeer {
  podSelector?: LabelSelector;
  namespaceSelector?: LabelSelector;
  ipBlock?: IPBlock;
}

export interface NetworkPolicyIngressRule {
  ports?: NetworkPolicyPort[];
  from?: NetworkPolicyPeer[];
}

export interface NetworkPolicyEgressRule {
  ports?: NetworkPolicyPort[];
  to?: NetworkPolicyPeer[];
}

export interface NetworkPolicySpec {
  podSelector?: LabelSelector;
  ingress?: NetworkPolicyIngressRule[];
  egress?: NetworkPolicyEgressRule[];
  /** `Ingress` and/or `Egress`; defaulted from the rules given. */
  policyTypes?: string[];
}

/** networking/v1 NetworkPolicy. */
export interface NetworkPolicy extends ApiObject {
  spec?: NetworkPolicySpec;
}
