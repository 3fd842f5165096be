import {
  fieldErrors,
  type ApiObject,
  type EndpointAddress,
  type EndpointPort,
  type Endpoints,
  type FieldError,
} from '@svc/api';
import { nameIsDnsSubdomain, validateDnsLabel, validateQualifiedName } from '@svc/machinery';
import type { Strategy } from '../strategy.js';
import { ipFamily, validateNonSpecialIp } from './ip-address.js';

export const PORT_PROTOCOLS = ['SCTP', 'TCP', 'UDP'];

/** Go's IsValidIP: the message of Kubernetes 1.32. */
export function validateIp(value: string, path: string): FieldError[] {
  return ipFamily(value) === null
    ? [fieldErrors.invalid(path, value, 'must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)')]
    : [];
}

/** ValidateNodeName: a DNS subdomain. */
export function validateNodeName(value: string, path: string): FieldError[] {
  return nameIsDnsSubdomain(value, false).map((m) => fieldErrors.invalid(path, value, m));
}

function validateAddress(a: EndpointAddress, path: string): FieldError[] {
  const errs = validateIp(a.ip, `${path}.ip`);
  if (a.hostname) errs.push(...validateDnsLabel(a.hostname, `${path}.hostname`));
  if (a.nodeName !== undefined) errs.push(...validateNodeName(a.nodeName, `${path}.nodeName`));
  errs.push(...validateNonSpecialIp(a.ip, `${path}.ip`));
  return errs;
}

function validatePort(p: EndpointPort, o: { requireName: boolean; path: string }): FieldError[] {
  const { path } = o;
  const errs: FieldError[] = [];
  if (o.requireName && !p.name) errs.push(fieldErrors.required(`${path}.name`, ''));
  else if (p.name) errs.push(...validateDnsLabel(p.name, `${path}.name`));
  if (!Number.isInteger(p.port) || p.port < 1 || p.port > 65535)
    errs.push(fieldErrors.invalid(`${path}.port`, p.port, 'must be between 1 and 65535, inclusive'));
  if (!p.protocol) errs.push(fieldErrors.required(`${path}.protocol`, ''));
  else if (!PORT_PROTOCOLS.includes(p.protocol))
    errs.push(fieldErrors.notSupported(`${path}.protocol`, p.protocol, PORT_PROTOCOLS));
  if (p.appProtocol !== undefined) errs.push(...validateQualifiedName(p.appProtocol, `${path}.appProtocol`));
  return errs;
}

/** Kubernetes' validateEndpointSubsets: paths and messages of pkg/apis/core/validation (1.32). */
function validate(obj: ApiObject): FieldError[] {
  const errs: FieldError[] = [];
  ((obj as Endpoints).subsets ?? []).forEach((ss, i) => {
    const path = `subsets[${i}]`;
    const addresses = ss.addresses ?? [];
    const notReady = ss.notReadyAddresses ?? [];
    if (addresses.length === 0 && notReady.length === 0)
      errs.push(fieldErrors.required(path, 'must specify `addresses` or `notReadyAddresses`'));
    addresses.forEach((a, j) => errs.push(...validateAddress(a, `${path}.addresses[${j}]`)));
    notReady.forEach((a, j) => errs.push(...validateAddress(a, `${path}.notReadyAddresses[${j}]`)));
    const ports = ss.ports ?? [];
    ports.forEach((p, j) =>
      errs.push(...validatePort(p, { requireName: ports.length > 1, path: `${path}.ports[${j}]` })),
    );
  });
  return errs;
}

/** v1 defaults: a port's protocol is TCP. */
function defaults(obj: ApiObject): void {
  for (const ss of (obj as Endpoints).subsets ?? []) for (const p of ss.ports ?? []) p.protocol ??= 'TCP';
}

/** core/v1 Endpoints: defaulted and validated as Kubernetes 1.32. */
export const endpointsStrategy: Strategy = {
  prepareForCreate: defaults,
  prepareForUpdate: defaults,
  validate,
  validateUpdate: validate,
  allowCreateOnUpdate: true,
  allowUnconditionalUpdate: true,
};
