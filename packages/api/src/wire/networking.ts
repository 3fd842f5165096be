import type { ApiObject } from '../types.js';

/** networking/v1 Ingress and IngressClass. */

/** A Service port by number or by name (exactly one). */
export interface ServiceBackendPort {
  name?: string;
  number?: number;
}

/** Exactly one of a Service or a resource of another kind in the Ingress's namespace. */
export interface IngressBackend {
  service?: { name: string; port?: ServiceBackendPort };
  resource?: { apiGroup?: string; kind: string; name: string };
}

export type PathType = 'Exact' | 'Prefix' | 'ImplementationSpecific';

export interface HTTPIngressPath {
  path?: string;
  /** Required in v1. */
  pathType: PathType;
  backend: IngressBackend;
}

export interface IngressRule {
  host?: string;
  http?: { paths: HTTPIngressPath[] };
}

export interface IngressTLS {
  hosts?: string[];
  secretName?: string;
}

export interface IngressSpec {
  /** Unset: the default class (DefaultIngressClass admission). */
  ingressClassName?: string;
  defaultBackend?: IngressBackend;
  tls?: IngressTLS[];
  rules?: IngressRule[];
}

export interface IngressLoadBalancerIngress {
  ip?: string;
  hostname?: string;
  ports?: Array<{ port: number; protocol: string; error?: string }>;
}

export interface Ingress extends ApiObject {
  spec?: IngressSpec;
  status?: { loadBalancer?: { ingress?: IngressLoadBalancerIngress[] } };
}

export interface IngressClassParametersReference {
  apiGroup?: string;
  kind: string;
  name: string;
  /** `Cluster` (the default) or `Namespace`. */
  scope?: string;
  namespace?: string;
}

export interface IngressClass extends ApiObject {
  spec?: { controller?: string; parameters?: IngressClassParametersReference };
}
