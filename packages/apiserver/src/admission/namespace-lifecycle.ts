import { notFound, statusError, systemNamespaces, type ApiObject } from '@svc/api';
import type { AdmissionAttributes, AdmissionPlugin } from './admission.js';

/** Reads a namespace; resolves undefined when it does not exist. */
export type NamespaceGetter = (name: string) => Promise<ApiObject | undefined>;

/**
 * Kubernetes' NamespaceLifecycle: no new objects in a missing or terminating namespace,
 * and the system namespaces cannot be deleted.
 */
export class NamespaceLifecycle implements AdmissionPlugin {
  readonly name = 'NamespaceLifecycle';
  constructor(private readonly getNamespace: NamespaceGetter) {}

  async validate(a: AdmissionAttributes): Promise<void> {
    if (a.resource.kind === 'Namespace' && a.resource.group === '') {
      if (a.operation === 'DELETE' && systemNamespaces().includes(a.name)) {
        throw statusError('Forbidden', `namespaces "${a.name}" is forbidden: this namespace may not be deleted`, {
          name: a.name,
          kind: 'namespaces',
        });
      }
      return;
    }
    if (!a.resource.namespaced || a.operation !== 'CREATE') return;
    const ns = await this.getNamespace(a.namespace);
    if (!ns) throw notFound({ group: '', resource: 'namespaces' }, a.namespace);
    const phase = (ns.status as { phase?: string } | undefined)?.phase;
    if (ns.metadata.deletionTimestamp || phase === 'Terminating') {
      throw statusError(
        'Forbidden',
        `${a.resource.plural}${a.resource.group ? '.' + a.resource.group : ''} "${a.name}" is forbidden: unable to create new content in namespace ${a.namespace} because it is being terminated`,
        {
          name: a.name,
          group: a.resource.group || undefined,
          kind: a.resource.plural,
          causes: [
            {
              reason: 'NamespaceTerminating',
              message: `namespace ${a.namespace} is being terminated`,
              field: 'metadata.namespace',
            },
          ],
        },
      );
    }
  }
}
