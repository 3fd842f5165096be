import { CliError } from './errors.js';
import { apiVersionOf, type Discovery, type ServedResource } from './discovery.js';
import { metadataOf, type ManifestObject } from './manifests.js';

/** A manifest object with the resource that serves it and where it lives. */
export interface ResolvedObject extends ManifestObject {
  resource: ServedResource;
  name: string;
  /** Undefined for cluster-scoped objects. */
  namespace?: string;
}

/**
 * Finds each object's resource through discovery and settles its namespace as kubectl does:
 * the object's own, else the session's; with an explicit `-n` the two must agree.
 */
export function resolveObjects(
  objects: ManifestObject[],
  o: { discovery: Discovery; namespace: string; explicitNamespace: boolean; allowGenerateName?: boolean },
): ResolvedObject[] {
  return objects.map(({ obj, source }) => {
    const meta = metadataOf(obj);
    const apiVersion = typeof obj.apiVersion === 'string' ? obj.apiVersion : '';
    const kind = typeof obj.kind === 'string' ? obj.kind : '';
    if (!apiVersion || !kind) {
      const missing = [!apiVersion ? 'apiVersion not set' : '', !kind ? 'kind not set' : ''].filter((x) => x);
      throw new CliError(
        `error validating "${source}": error validating data: [${missing.join(', ')}]; if you choose to ignore these errors, turn validation off with --validate=false`,
      );
    }
    const resource = o.discovery.forKind(apiVersion, kind);
    const name = typeof meta.name === 'string' ? meta.name : '';
    if (!resource) {
      throw new CliError(
        `resource mapping not found for name: "${name}" namespace: "${typeof meta.namespace === 'string' ? meta.namespace : ''}" from "${source}": no matches for kind "${kind}" in version "${apiVersion}"\nensure CRDs are installed first`,
      );
    }
    if (!name && !(o.allowGenerateName && typeof meta.generateName === 'string')) {
      throw new CliError(
        `error when retrieving current configuration of:\nResource: "${resource.resource}${resource.group ? `.${resource.version}.${resource.group}` : ''}", GroupVersionKind: "${apiVersionOf(resource)}, Kind=${kind}"\nName: "", Namespace: "${o.namespace}"\nfrom server for: "${source}": resource name may not be empty`,
      );
    }
    let namespace: string | undefined;
    if (resource.namespaced) {
      const own = typeof meta.namespace === 'string' && meta.namespace !== '' ? meta.namespace : undefined;
      if (own && o.explicitNamespace && own !== o.namespace) {
        throw new CliError(
          `the namespace from the provided object "${own}" does not match the namespace "${o.namespace}". You must pass '--namespace=${own}' to perform this operation.`,
        );
      }
      namespace = own ?? o.namespace;
    }
    // As kubectl's resource builder does: the object carries the namespace it is sent to.
    const withNamespace =
      namespace !== undefined && meta.namespace !== namespace ? { ...obj, metadata: { ...meta, namespace } } : obj;
    return { obj: withNamespace, source, resource, name, namespace };
  });
}
