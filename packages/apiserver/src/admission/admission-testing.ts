// Helpers for admission plugin unit tests: attributes for a request, and the Status a plugin threw.
import { builtinCatalog, isStatusError, type ApiObject, type ResourceType, type Status } from '@svc/api';
import type { UserInfo } from '@svc/component-base';
import type { AdmissionAttributes } from './admission.js';

export interface AttributesInput {
  /** `plural` of a built-in type, or `group/version/plural`; `v1` core when no group is given. */
  resource: string | ResourceType;
  operation?: AdmissionAttributes['operation'];
  subresource?: string;
  namespace?: string;
  object?: ApiObject;
  oldObject?: ApiObject;
  user?: UserInfo;
  dryRun?: boolean;
}

export function resourceType(resource: string): ResourceType {
  const [g, v, p] = resource.includes('/') ? resource.split('/') : ['', 'v1', resource];
  const r = builtinCatalog().lookup(g ?? '', v ?? '', p ?? '');
  if (!r) throw new Error(`no resource ${resource}`);
  return r;
}

/** The attributes the generic store would build for this request. */
export function attributes(o: AttributesInput): AdmissionAttributes {
  const resource = typeof o.resource === 'string' ? resourceType(o.resource) : o.resource;
  const ref = o.object ?? o.oldObject;
  return {
    operation: o.operation ?? 'CREATE',
    resource,
    subresource: o.subresource ?? '',
    namespace: o.namespace ?? ref?.metadata.namespace ?? '',
    name: ref?.metadata.name ?? '',
    object: o.object,
    oldObject: o.oldObject,
    dryRun: o.dryRun === true,
    user: o.user,
    warnings: [],
    annotations: {},
  };
}

/** The Status `p` rejects with; fails the test when it resolves or throws something else. */
export async function failure(p: Promise<unknown>): Promise<Status> {
  try {
    await p;
  } catch (e) {
    if (isStatusError(e)) return e.status;
    throw e;
  }
  throw new Error('expected a Status error');
}

export const podObject = (spec: Record<string, unknown> = {}, metadata: ApiObject['metadata'] = {}): ApiObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'p', namespace: 'ns', ...metadata },
  spec: { containers: [{ name: 'c', image: 'busybox' }], ...spec },
});
