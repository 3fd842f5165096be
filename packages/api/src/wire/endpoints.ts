import type { ApiObject } from '../types.js';
import type { ObjectReference } from './meta.js';

/** core/v1 Endpoints: the addresses behind a Service, grouped in subsets of equal ports. */

export interface EndpointAddress {
  ip: string;
  hostname?: string;
  nodeName?: string;
  targetRef?: ObjectReference;
}

export interface EndpointPort {
  name?: string;
  port: number;
  protocol?: 'TCP' | 'UDP' | 'SCTP';
  appProtocol?: string;
}

export interface EndpointSubset {
  addresses?: EndpointAddress[];
  notReadyAddresses?: EndpointAddress[];
  ports?: EndpointPort[];
}

export interface Endpoints extends ApiObject {
  subsets?: EndpointSubset[];
}

/** discovery/v1 EndpointSlice: up to 1000 endpoints of one address type behind a Service. */

export interface EndpointConditions {
  ready?: boolean;
  serving?: boolean;
  terminating?: boolean;
}

export interface SliceEndpoint {
  addresses: string[];
  conditions?: EndpointConditions;
  hostname?: string;
  targetRef?: ObjectReference;
  deprecatedTopology?: Record<string, string>;
  nodeName?: string;
  zone?: string;
  hints?: { forZones?: Array<{ name: string }> };
}

export interface SlicePort {
  name?: string;
  protocol?: 'TCP' | 'UDP' | 'SCTP';
  port?: number;
  appProtocol?: string;
}

export interface EndpointSlice extends ApiObject {
  addressType: 'IPv4' | 'IPv6' | 'FQDN';
  endpoints: SliceEndpoint[];
  ports?: SlicePort[];
}
