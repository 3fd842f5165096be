import { internalError, notFound, type ApiObject } from '@svc/api';
import type { AdmissionAttributes, AdmissionPlugin } from './admission.js';
import type { AdmissionContext } from './plugins.js';

/**
 * Kubernetes' NamespaceExists: creating, updating or deleting an object of a namespace that does
 * not exist is a 404 `namespaces "<name>" not found` (where NamespaceLifecycle would refuse only
 * creates). Namespaces themselves and cluster-scoped objects are not checked.
 */
export class NamespaceExists implements AdmissionPlugin {
  readonly name = 'NamespaceExists';

  /** `getNamespace` reads a namespace (cache first, then storage); undefined when it does not exist. */
  constructor(private readonly getNamespace: (name: string) => Promise<ApiObject | undefined>) {}

  async validate(a: AdmissionAttributes): Promise<void> {
    if (a.operation === 'CONNECT' || a.namespace === '') return;
    if (a.resource.group === '' && a.resource.kind === 'Namespace') return;
    let ns: ApiObject | undefined;
    try {
      ns = await this.getNamespace(a.namespace);
    } catch (e) {
      throw internalError((e as Error).message);
    }
    if (!ns) throw notFound({ group: '', resource: 'namespaces' }, a.namespace);
  }
}

export function newNamespaceExists(c: AdmissionContext): NamespaceExists {
  const namespaces = { group: '', version: 'v1', resource: 'namespaces' };
  return new NamespaceExists((name) => c.read(namespaces, { namespace: '', name }));
}
