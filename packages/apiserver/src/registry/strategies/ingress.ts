import { isIPv6 } from 'node:net';
import {
  classAnnotationKey,
  fieldErrors,
  type ApiObject,
  type FieldError,
  type Ingress,
  type IngressBackend,
  type IngressClass,
  type IngressRule,
} from '@svc/api';
import {
  isDns1123Label,
  isDns1123Subdomain,
  isValidPathSegmentName,
  nameIsDns1035Label,
  nameIsDnsSubdomain,
  regexError,
  utf8Length,
} from '@svc/machinery';
import type { Strategy } from '../strategy.js';

const PATH_TYPES = ['Exact', 'ImplementationSpecific', 'Prefix'];
const INVALID_PATH_SEQUENCES = ['//', '/./', '/../', '%2f', '%2F'];
const INVALID_PATH_SUFFIXES = ['/..', '/.'];
const PARAMETER_SCOPES = ['Cluster', 'Namespace'];
const MAX_CONTROLLER_LENGTH = 250;

const DNS1123_LABEL_FMT = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const WILDCARD_FMT = `\\*\\.${DNS1123_LABEL_FMT}(\\.${DNS1123_LABEL_FMT})*`;
const WILDCARD_MSG =
  "a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character";
const HTTP_PATH_FMT = "[A-Za-z0-9/\\-._~%!$&'()*+,;=:]+";

const invalidEach = (path: string, value: unknown, msgs: string[]): FieldError[] =>
  msgs.map((m) => fieldErrors.invalid(path, value, m));

/** Kubernetes' IsWildcardDNS1123Subdomain: `*.` and a DNS subdomain. */
export function isWildcardDns1123Subdomain(value: string): string[] {
  const errs: string[] = [];
  if (utf8Length(value) > 253) errs.push('must be no more than 253 characters');
  if (!new RegExp(`^${WILDCARD_FMT}$`).test(value)) errs.push(regexError(WILDCARD_MSG, WILDCARD_FMT, '*.example.com'));
  return errs;
}

/** Kubernetes' IsValidPortNum. */
export function isValidPortNum(port: number): string[] {
  return port >= 1 && port <= 65535 ? [] : ['must be between 1 and 65535, inclusive'];
}

/** Kubernetes' IsValidPortName (an IANA service name). */
export function isValidPortName(port: string): string[] {
  const errs: string[] = [];
  if (port.length > 15) errs.push('must be no more than 15 characters');
  if (!/^[-a-z0-9]+$/.test(port)) errs.push('must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)');
  if (!/[a-z]/.test(port)) errs.push('must contain at least one letter (a-z)');
  if (port.includes('--')) errs.push('must not contain consecutive hyphens');
  if (port.startsWith('-') || port.endsWith('-')) errs.push('must not begin or end with a hyphen');
  return errs;
}

/** Kubernetes' IsDomainPrefixedPath: `example.com/path`. */
export function validateDomainPrefixedPath(value: string, path: string): FieldError[] {
  if (value.length === 0) return [fieldErrors.required(path, '')];
  const slash = value.indexOf('/');
  const host = slash < 0 ? '' : value.slice(0, slash);
  const rest = slash < 0 ? '' : value.slice(slash + 1);
  if (host === '' || rest === '')
    return [fieldErrors.invalid(path, value, 'must be a domain-prefixed path (such as "acme.io/foo")')];
  const errs = invalidEach(path, host, isDns1123Subdomain(host));
  if (!new RegExp(`^${HTTP_PATH_FMT}$`).test(rest))
    errs.push(fieldErrors.invalid(path, rest, regexError('Invalid path', HTTP_PATH_FMT)));
  return errs;
}

/** Go's netutils.ParseIPSloppy accepts it: IPv4 (leading zeros allowed) or IPv6. */
export function isIp(value: string): boolean {
  const v4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(value);
  if (v4) return v4.slice(1).every((o) => Number(o) <= 255);
  return isIPv6(value);
}

/** A `resource` backend or an IngressClass's parameters: kind and name path segments, apiGroup a DNS subdomain. */
function validateTypedReference(ref: { apiGroup?: string; kind?: string; name?: string }, path: string): FieldError[] {
  const errs: FieldError[] = [];
  if (ref.apiGroup !== undefined)
    errs.push(...invalidEach(`${path}.apiGroup`, ref.apiGroup, isDns1123Subdomain(ref.apiGroup)));
  if (!ref.kind) errs.push(fieldErrors.required(`${path}.kind`, 'kind is required'));
  else errs.push(...invalidEach(`${path}.kind`, ref.kind, isValidPathSegmentName(ref.kind)));
  if (!ref.name) errs.push(fieldErrors.required(`${path}.name`, 'name is required'));
  else errs.push(...invalidEach(`${path}.name`, ref.name, isValidPathSegmentName(ref.name)));
  return errs;
}

/** Exactly one of a Service (name, and a port by name or number) and a resource. */
function validateBackend(b: IngressBackend, path: string): FieldError[] {
  const hasResource = b.resource !== undefined && b.resource !== null;
  const service = b.service;
  if (hasResource && service) return [fieldErrors.invalid(path, '', 'cannot set both resource and service backends')];
  if (hasResource) return validateTypedReference(b.resource ?? {}, `${path}.resource`);
  if (!service) return [fieldErrors.invalid(path, '', 'resource or service backend is required')];
  const errs: FieldError[] = [];
  if (!service.name) errs.push(fieldErrors.required(`${path}.service.name`, ''));
  else errs.push(...invalidEach(`${path}.service.name`, service.name, nameIsDns1035Label(service.name, false)));
  const portName = service.port?.name ?? '';
  const portNumber = service.port?.number ?? 0;
  if (portName && portNumber) errs.push(fieldErrors.invalid(path, '', 'cannot set both port name & port number'));
  else if (portName) errs.push(...invalidEach(`${path}.service.port.name`, portName, isValidPortName(portName)));
  else if (portNumber) errs.push(...invalidEach(`${path}.service.port.number`, portNumber, isValidPortNum(portNumber)));
  else errs.push(fieldErrors.required(path, 'port name or number is required'));
  return errs;
}

interface IngressOptions {
  allowInvalidSecretName: boolean;
  allowInvalidWildcardHostRule: boolean;
}

function validateRuleValue(rule: IngressRule, path: string): FieldError[] {
  const http = rule.http;
  if (!http) return [];
  const errs: FieldError[] = [];
  const paths = http.paths ?? [];
  if (paths.length === 0) errs.push(fieldErrors.required(`${path}.http.paths`, ''));
  paths.forEach((p, i) => {
    const pp = `${path}.http.paths[${i}]`;
    const value = p.path ?? '';
    if (p.pathType === undefined || p.pathType === null) {
      errs.push(fieldErrors.required(`${pp}.pathType`, 'pathType must be specified'));
      return;
    }
    switch (p.pathType) {
      case 'Exact':
      case 'Prefix':
        if (!value.startsWith('/')) errs.push(fieldErrors.invalid(`${pp}.path`, value, 'must be an absolute path'));
        for (const seq of INVALID_PATH_SEQUENCES)
          if (value.includes(seq)) errs.push(fieldErrors.invalid(`${pp}.path`, value, `must not contain '${seq}'`));
        for (const suffix of INVALID_PATH_SUFFIXES)
          if (value.endsWith(suffix))
            errs.push(fieldErrors.invalid(`${pp}.path`, value, `cannot end with '${suffix}'`));
        break;
      case 'ImplementationSpecific':
        if (value.length > 0 && !value.startsWith('/'))
          errs.push(fieldErrors.invalid(`${pp}.path`, value, 'must be an absolute path'));
        break;
      default:
        errs.push(fieldErrors.notSupported(`${pp}.pathType`, p.pathType, PATH_TYPES));
    }
    errs.push(...validateBackend(p.backend ?? {}, `${pp}.backend`));
  });
  return errs;
}

function validateRules(rules: readonly IngressRule[], o: IngressOptions): FieldError[] {
  const errs: FieldError[] = [];
  rules.forEach((rule, i) => {
    const path = `spec.rules[${i}]`;
    let wildcard = false;
    const host = rule.host ?? '';
    if (host) {
      if (isIp(host)) errs.push(fieldErrors.invalid(`${path}.host`, host, 'must be a DNS name, not an IP address'));
      if (host.includes('*')) {
        errs.push(...invalidEach(`${path}.host`, host, isWildcardDns1123Subdomain(host)));
        wildcard = true;
      } else {
        errs.push(...invalidEach(`${path}.host`, host, isDns1123Subdomain(host)));
      }
    }
    if (!wildcard || !o.allowInvalidWildcardHostRule) errs.push(...validateRuleValue(rule, path));
  });
  return errs;
}

/** Kubernetes' ValidateIngressSpec (networking/validation) for v1. */
export function validateIngressSpec(spec: NonNullable<Ingress['spec']>, o: IngressOptions): FieldError[] {
  const errs: FieldError[] = [];
  const rules = spec.rules ?? [];
  if (rules.length === 0 && !spec.defaultBackend)
    // Go prints the typed slice it was given (%#v); the detail carries it so the message is Kubernetes'.
    errs.push({
      path: 'spec',
      type: 'FieldValueInvalid',
      detail: `${spec.rules ? '[]networking.IngressRule{}' : '[]networking.IngressRule(nil)'}: either \`defaultBackend\` or \`rules\` must be specified`,
    });
  if (spec.defaultBackend) errs.push(...validateBackend(spec.defaultBackend, 'spec.defaultBackend'));
  if (rules.length > 0) errs.push(...validateRules(rules, o));
  (spec.tls ?? []).forEach((tls, i) => {
    const path = `spec.tls[${i}]`;
    (tls.hosts ?? []).forEach((host, j) => {
      const msgs = host.includes('*') ? isWildcardDns1123Subdomain(host) : isDns1123Subdomain(host);
      errs.push(...invalidEach(`${path}.hosts[${j}]`, host, msgs));
    });
    if (!o.allowInvalidSecretName && tls.secretName)
      errs.push(...invalidEach(`${path}.secretName`, tls.secretName, nameIsDnsSubdomain(tls.secretName, false)));
  });
  if (spec.ingressClassName !== undefined && spec.ingressClassName !== null)
    errs.push(
      ...invalidEach('spec.ingressClassName', spec.ingressClassName, nameIsDnsSubdomain(spec.ingressClassName, false)),
    );
  return errs;
}

const ingressSpecOf = (o: ApiObject): NonNullable<Ingress['spec']> => (o.spec ?? {}) as NonNullable<Ingress['spec']>;

/** Kubernetes' ValidateIngressLoadBalancerStatus. */
function validateIngressStatus(obj: ApiObject): FieldError[] {
  const errs: FieldError[] = [];
  ((obj as Ingress).status?.loadBalancer?.ingress ?? []).forEach((lb, i) => {
    const path = `status.loadBalancer.ingress[${i}]`;
    if (lb.ip && !isIp(lb.ip)) errs.push(fieldErrors.invalid(`${path}.ip`, lb.ip, 'must be a valid IP address'));
    if (lb.hostname) {
      errs.push(...invalidEach(`${path}.hostname`, lb.hostname, isDns1123Subdomain(lb.hostname)));
      if (isIp(lb.hostname))
        errs.push(fieldErrors.invalid(`${path}.hostname`, lb.hostname, 'must be a DNS name, not an IP address'));
    }
  });
  return errs;
}

/**
 * A Service port's `name` and `number` are omitted when empty in Kubernetes' JSON (omitempty);
 * a Protobuf body always carries both, so a zero number or an empty name is dropped here.
 */
function dropEmptyPorts(obj: ApiObject): void {
  const spec = ingressSpecOf(obj);
  const backends = [
    spec.defaultBackend,
    ...(spec.rules ?? []).flatMap((r) => (r.http?.paths ?? []).map((p) => p.backend)),
  ];
  for (const b of backends) {
    const port = b?.service?.port;
    if (!port) continue;
    if (port.number === 0) delete port.number;
    if (port.name === '') delete port.name;
  }
}

/** What an update may keep of what the stored Ingress already broke (Kubernetes' options from the old object). */
function optionsFrom(old: ApiObject): IngressOptions {
  const spec = ingressSpecOf(old);
  return {
    allowInvalidSecretName: (spec.tls ?? []).some(
      (t) => !!t.secretName && nameIsDnsSubdomain(t.secretName, false).length > 0,
    ),
    allowInvalidWildcardHostRule: (spec.rules ?? []).some(
      (r) => (r.host ?? '').includes('*') && validateRuleValue(r, '').length > 0,
    ),
  };
}

/**
 * networking/v1 Ingress, as Kubernetes 1.32: status reset on create and kept on spec writes (spec
 * on status writes), generation moving with the spec, and ValidateIngressCreate/Update with
 * Kubernetes' paths and messages: pathType required, one backend kind, a Service port by name
 * or number, hosts DNS names (wildcards `*.`), TLS secret names, the class annotation matching
 * `ingressClassName`.
 */
export const ingressStrategy: Strategy = {
  prepareForCreate(obj) {
    dropEmptyPorts(obj);
    obj.status = {};
  },
  prepareForUpdate: dropEmptyPorts,
  validate(obj) {
    const errs = validateIngressSpec(ingressSpecOf(obj), {
      allowInvalidSecretName: false,
      allowInvalidWildcardHostRule: false,
    });
    const annotation = obj.metadata.annotations?.[classAnnotationKey('ingress-class')];
    const className = ingressSpecOf(obj).ingressClassName;
    if (annotation !== undefined && className !== undefined && className !== null && annotation !== className)
      errs.push(
        fieldErrors.invalid(
          `annotations.${classAnnotationKey('ingress-class')}`,
          annotation,
          'must match `ingressClassName` when both are specified',
        ),
      );
    return errs;
  },
  validateUpdate(obj, old, ctx) {
    if (ctx.subresource === 'status') return validateIngressStatus(obj);
    return validateIngressSpec(ingressSpecOf(obj), optionsFrom(old));
  },
  allowUnconditionalUpdate: true,
};

const ingressClassSpecOf = (o: ApiObject): NonNullable<IngressClass['spec']> =>
  (o.spec ?? {}) as NonNullable<IngressClass['spec']>;

/** Kubernetes' validateIngressClassSpec. */
function validateIngressClass(obj: ApiObject): FieldError[] {
  const spec = ingressClassSpecOf(obj);
  const errs: FieldError[] = [];
  const controller = spec.controller ?? '';
  if (utf8Length(controller) > MAX_CONTROLLER_LENGTH)
    errs.push({
      path: 'spec.controller',
      type: 'FieldValueTooLong',
      detail: `may not be more than ${MAX_CONTROLLER_LENGTH} bytes`,
    });
  errs.push(...validateDomainPrefixedPath(controller, 'spec.controller'));
  const p = spec.parameters;
  if (!p) return errs;
  const path = 'spec.parameters';
  errs.push(...validateTypedReference(p, path));
  if (p.scope === undefined || p.scope === null) {
    errs.push(fieldErrors.required(`${path}.scope`, ''));
    return errs;
  }
  if (!PARAMETER_SCOPES.includes(p.scope)) {
    errs.push(fieldErrors.notSupported(`${path}.scope`, p.scope, PARAMETER_SCOPES));
    return errs;
  }
  const namespace = p.namespace;
  if (p.scope === 'Namespace') {
    if (namespace === undefined || namespace === null)
      errs.push(fieldErrors.required(`${path}.namespace`, "`parameters.scope` is set to 'Namespace'"));
    else errs.push(...invalidEach(`${path}.namespace`, namespace, isDns1123Label(namespace)));
  }
  if (p.scope === 'Cluster' && namespace !== undefined && namespace !== null)
    errs.push(fieldErrors.forbidden(`${path}.namespace`, "`parameters.scope` is set to 'Cluster'"));
  return errs;
}

/** v1 default: the parameters' scope is Cluster. */
function defaultIngressClass(obj: ApiObject): void {
  const p = ingressClassSpecOf(obj).parameters;
  if (p && (p.scope === undefined || p.scope === null)) p.scope = 'Cluster';
}

/**
 * networking/v1 IngressClass, as Kubernetes 1.32: parameters' scope defaults to Cluster, the
 * controller is a domain-prefixed path of at most 250 bytes and immutable, parameters are a
 * typed reference with a valid scope and namespace.
 */
export const ingressClassStrategy: Strategy = {
  prepareForCreate: defaultIngressClass,
  prepareForUpdate: defaultIngressClass,
  validate: validateIngressClass,
  validateUpdate(obj, old) {
    const errs: FieldError[] = [];
    const controller = ingressClassSpecOf(obj).controller ?? '';
    if (controller !== (ingressClassSpecOf(old).controller ?? ''))
      errs.push(fieldErrors.invalid('spec.controller', controller, 'field is immutable'));
    return [...errs, ...validateIngressClass(obj)];
  },
  allowUnconditionalUpdate: true,
};
