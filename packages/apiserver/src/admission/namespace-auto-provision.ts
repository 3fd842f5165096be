import { isAlreadyExists, isStatusError, naming, type ApiObject } from '@svc/api';
import type { AdmissionAttributes, AdmissionPlugin } from './admission.js';
import { admissionForbidden } from './admission-errors.js';
import type { AdmissionContext } from './plugins.js';

export interface NamespaceAutoProvisionOptions {
  /** Reads a namespace (cache first); undefined when it does not exist. */
  getNamespace(name: string): Promise<ApiObject | undefined>;
  /** Creates a namespace as the server itself; resolves once it is stored. */
  createNamespace(namespace: ApiObject): Promise<unknown>;
}

/**
 * Kubernetes' NamespaceAutoProvision: creating an object in a namespace that does not exist
 * creates the namespace first (as the server, through the whole write path), so the create goes
 * on. Dry runs create nothing. A namespace that appeared meanwhile is fine; any other failure is
 * a 403 `<resource> "<name>" is forbidden: <why>`.
 */
export class NamespaceAutoProvision implements AdmissionPlugin {
  readonly name = 'NamespaceAutoProvision';

  constructor(private readonly o: NamespaceAutoProvisionOptions) {}

  async admit(a: AdmissionAttributes): Promise<void> {
    if (a.operation !== 'CREATE' || a.dryRun || a.namespace === '') return;
    if (a.resource.group === '' && a.resource.kind === 'Namespace') return;
    try {
      if (await this.o.getNamespace(a.namespace)) return;
      await this.o.createNamespace({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: a.namespace } });
    } catch (e) {
      if (isAlreadyExists(e)) return;
      if (isStatusError(e) && e.reason === 'Forbidden') throw e;
      throw admissionForbidden(a, (e as Error).message);
    }
  }
}

/** The user the server's own writes run as (Kubernetes' loopback client). */
const LOOPBACK_USER = { name: 'system:apiserver', groups: ['system:masters', 'system:authenticated'] };

const NAMESPACES = { group: '', version: 'v1', resource: 'namespaces' };

export function newNamespaceAutoProvision(c: AdmissionContext): NamespaceAutoProvision {
  return new NamespaceAutoProvision({
    getNamespace: (name) => c.read(NAMESPACES, { namespace: '', name }),
    createNamespace: (namespace) => {
      const type = c.catalog.lookup(NAMESPACES.group, NAMESPACES.version, NAMESPACES.resource);
      if (!type) throw new Error('namespaces are not served');
      return c.storeFor(type).create('', namespace, {
        ctx: { user: LOOPBACK_USER, fieldManager: naming().apiserverName },
      });
    },
  });
}
