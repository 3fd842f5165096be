/** Kubernetes' validation of a webhook's client configuration (k8s.io/apiserver's util/webhook), and Go's URL parsing it relies on. */
import { fieldErrors, type FieldError } from '@svc/api';
import { isDns1123Subdomain } from '@svc/machinery';
import type { WebhookClientConfig } from './client.js';

const URL_FORM = '; desired format: https://host[/path]';

/** Kubernetes' ValidateWebhookURL with https required. */
export function validateWebhookUrl(raw: string, path: string): FieldError[] {
  const u = parseGoUrl(raw, false);
  if (typeof u === 'string') return [fieldErrors.required(path, `url must be a valid URL: ${u}${URL_FORM}`)];
  const errs: FieldError[] = [];
  if (u.scheme !== 'https')
    errs.push(fieldErrors.invalid(path, u.scheme, `'https' is the only allowed URL scheme${URL_FORM}`));
  if (u.host === '') errs.push(fieldErrors.invalid(path, u.host, `host must be specified${URL_FORM}`));
  if (u.user !== undefined)
    errs.push(fieldErrors.invalid(path, u.user, 'user information is not permitted in the URL'));
  if (u.fragment !== '') errs.push(fieldErrors.invalid(path, u.fragment, 'fragments are not permitted in the URL'));
  if (u.rawQuery !== '')
    errs.push(fieldErrors.invalid(path, u.rawQuery, 'query parameters are not permitted in the URL'));
  return errs;
}

/** Kubernetes' ValidateWebhookService (a missing port is 443). */
export function validateWebhookService(
  service: NonNullable<WebhookClientConfig['service']>,
  path: string,
): FieldError[] {
  const errs: FieldError[] = [];
  if (!service.name) errs.push(fieldErrors.required(`${path}.name`, 'service name is required'));
  if (!service.namespace) errs.push(fieldErrors.required(`${path}.namespace`, 'service namespace is required'));
  const port = service.port ?? 443;
  if (!Number.isInteger(port) || port < 1 || port > 65535)
    errs.push(fieldErrors.invalid(`${path}.port`, port, 'port is not valid: must be between 1 and 65535, inclusive'));
  const p = service.path;
  if (p === undefined || p === '' || p === '/') return errs;
  if (p === '//') return [...errs, fieldErrors.invalid(`${path}.path`, p, 'segment[0] may not be empty')];
  if (!p.startsWith('/')) errs.push(fieldErrors.invalid(`${path}.path`, p, "must start with a '/'"));
  let check = p.slice(1);
  if (check.endsWith('/')) check = check.slice(0, -1);
  check.split('/').forEach((step, i) => {
    if (step === '') {
      errs.push(fieldErrors.invalid(`${path}.path`, p, `segment[${i}] may not be empty`));
      return;
    }
    for (const m of isDns1123Subdomain(step)) errs.push(fieldErrors.invalid(`${path}.path`, p, `segment[${i}]: ${m}`));
  });
  return errs;
}

export interface GoUrl {
  scheme: string;
  host: string;
  /** The user information, when the authority has an '@'. */
  user?: string;
  fragment: string;
  rawQuery: string;
}

/**
 * The parts of a URL as Go's `url.Parse` (or, `viaRequest`, `url.ParseRequestURI`) splits it;
 * a string is Go's error text (`parse "x": missing protocol scheme`).
 */
export function parseGoUrl(raw: string, viaRequest: boolean): GoUrl | string {
  let rest = raw;
  let fragment = '';
  if (!viaRequest) {
    const hash = raw.indexOf('#');
    if (hash >= 0) {
      fragment = raw.slice(hash + 1);
      rest = raw.slice(0, hash);
    }
  }
  const parsed = rest;
  const fail = (msg: string): string => `parse ${JSON.stringify(parsed)}: ${msg}`;
  // eslint-disable-next-line no-control-regex -- Go refuses ASCII control characters in a URL
  if (/[\x00-\x1f\x7f]/.test(rest)) return fail('net/url: invalid control character in URL');
  if (rest === '' && viaRequest) return fail('empty url');
  const url: GoUrl = { scheme: '', host: '', fragment, rawQuery: '' };
  if (rest === '*') return url;
  const scheme = /^([a-zA-Z][a-zA-Z0-9+.-]*):/.exec(rest);
  if (scheme) {
    url.scheme = (scheme[1] ?? '').toLowerCase();
    rest = rest.slice(scheme[0].length);
  } else if (rest.startsWith(':')) {
    return fail('missing protocol scheme');
  }
  if (rest.endsWith('?') && rest.indexOf('?') === rest.length - 1) rest = rest.slice(0, -1);
  else {
    const q = rest.indexOf('?');
    if (q >= 0) {
      url.rawQuery = rest.slice(q + 1);
      rest = rest.slice(0, q);
    }
  }
  if (!rest.startsWith('/')) {
    if (url.scheme !== '') return url;
    if (viaRequest) return fail('invalid URI for request');
    if ((rest.split('/')[0] ?? '').includes(':')) return fail('first path segment in URL cannot contain colon');
  }
  if ((url.scheme !== '' || (!viaRequest && !rest.startsWith('///'))) && rest.startsWith('//')) {
    const slash = rest.indexOf('/', 2);
    const authority = slash < 0 ? rest.slice(2) : rest.slice(2, slash);
    const at = authority.lastIndexOf('@');
    const hostError = goHostError(at < 0 ? authority : authority.slice(at + 1));
    if (hostError) return fail(hostError);
    if (at >= 0) {
      const user = authority.slice(0, at);
      if (!/^[A-Za-z0-9\-._:~!$&'()*+,;=%@]*$/.test(user)) return fail('net/url: invalid userinfo');
      url.user = user;
    }
    url.host = at < 0 ? authority : authority.slice(at + 1);
  }
  return url;
}

/** Go's parseHost checks: the port after the host is digits, and no character that must be escaped. */
function goHostError(host: string): string | undefined {
  let colonPort = '';
  if (host.startsWith('[')) {
    const end = host.lastIndexOf(']');
    if (end < 0) return "missing ']' in host";
    colonPort = host.slice(end + 1);
  } else {
    const colon = host.lastIndexOf(':');
    if (colon >= 0) colonPort = host.slice(colon);
  }
  if (colonPort !== '' && !/^:[0-9]*$/.test(colonPort)) return `invalid port ${JSON.stringify(colonPort)} after host`;
  const bad = /[^A-Za-z0-9\-_.~!$&'()*+,;=:[\]<>"%\u0080-\uffff]/.exec(host);
  if (bad) return `invalid character ${JSON.stringify(bad[0])} in host name`;
  return undefined;
}
