// Discovery documents (`/api/v1`, `/apis/<group>/<version>`): read by clients to find the
// resources a server serves at run time. They have no schema in the catalog, so no
// conformance check applies.

/** One entry of an `APIResourceList`: a resource, or a subresource named `<plural>/<sub>`. */
export interface APIResource {
  /** The plural (`widgets`), or `widgets/status` for a subresource. */
  name: string;
  singularName?: string;
  namespaced: boolean;
  /** Only when it differs from the list's group (subresources such as `scale`). */
  group?: string;
  version?: string;
  kind: string;
  verbs: string[];
  shortNames?: string[];
  categories?: string[];
  storageVersionHash?: string;
}

/** The resources of one group version. */
export interface APIResourceList {
  kind: 'APIResourceList';
  apiVersion?: string;
  /** `v1` for the core group, else `<group>/<version>`. */
  groupVersion: string;
  resources: APIResource[];
}
