import { readFileSync } from 'node:fs';
import type { ApiServerOptions } from '../options.js';

/** The ConfigMap, in the system namespace, through which components delegate client-certificate trust (Kubernetes' name). */
export const AUTHENTICATION_INFO_CONFIGMAP = 'extension-apiserver-authentication';

/**
 * What the `start-cluster-authentication-info-controller` post-start hook publishes, as
 * Kubernetes does: `client-ca-file` (the `--client-ca-file` bundle) and the
 * `--requestheader-*` settings (lists as JSON arrays).
 */
export function authenticationInfoData(o: ApiServerOptions): Record<string, string> {
  const data: Record<string, string> = {};
  if (o.clientCaFile) data['client-ca-file'] = readFileSync(o.clientCaFile, 'utf8');
  const rh = o.requestHeader;
  if (rh.clientCaFile) {
    data['requestheader-client-ca-file'] = readFileSync(rh.clientCaFile, 'utf8');
    data['requestheader-allowed-names'] = JSON.stringify(rh.allowedNames);
    data['requestheader-username-headers'] = JSON.stringify(rh.usernameHeaders);
    data['requestheader-uid-headers'] = JSON.stringify(rh.uidHeaders);
    data['requestheader-group-headers'] = JSON.stringify(rh.groupHeaders);
    data['requestheader-extra-headers-prefix'] = JSON.stringify(rh.extraHeadersPrefix);
  }
  return data;
}
