import { group } from '@svc/api';
import type { GroupVersionResource } from '@svc/client';

/** The resources the controllers read and write (functions: groups follow the naming in use). */
export const R = {
  namespaces: (): GroupVersionResource => ({ group: '', version: 'v1', resource: 'namespaces' }),
  secrets: (): GroupVersionResource => ({ group: '', version: 'v1', resource: 'secrets' }),
  configMaps: (): GroupVersionResource => ({ group: '', version: 'v1', resource: 'configmaps' }),
  serviceAccounts: (): GroupVersionResource => ({ group: '', version: 'v1', resource: 'serviceaccounts' }),
  pods: (): GroupVersionResource => ({ group: '', version: 'v1', resource: 'pods' }),
  services: (): GroupVersionResource => ({ group: '', version: 'v1', resource: 'services' }),
  endpoints: (): GroupVersionResource => ({ group: '', version: 'v1', resource: 'endpoints' }),
  endpointSlices: (): GroupVersionResource => ({
    group: group('discovery'),
    version: 'v1',
    resource: 'endpointslices',
  }),
  resourceQuotas: (): GroupVersionResource => ({ group: '', version: 'v1', resource: 'resourcequotas' }),
  nodes: (): GroupVersionResource => ({ group: '', version: 'v1', resource: 'nodes' }),
  events: (): GroupVersionResource => ({ group: '', version: 'v1', resource: 'events' }),
  leases: (): GroupVersionResource => ({ group: group('coordination'), version: 'v1', resource: 'leases' }),
  clusterRoles: (): GroupVersionResource => ({
    group: group('rbac.authorization'),
    version: 'v1',
    resource: 'clusterroles',
  }),
  csrs: (): GroupVersionResource => ({
    group: group('certificates'),
    version: 'v1',
    resource: 'certificatesigningrequests',
  }),
  subjectAccessReviews: (): GroupVersionResource => ({
    group: group('authorization'),
    version: 'v1',
    resource: 'subjectaccessreviews',
  }),
  deployments: (): GroupVersionResource => ({ group: 'apps', version: 'v1', resource: 'deployments' }),
  replicaSets: (): GroupVersionResource => ({ group: 'apps', version: 'v1', resource: 'replicasets' }),
  daemonSets: (): GroupVersionResource => ({ group: 'apps', version: 'v1', resource: 'daemonsets' }),
  controllerRevisions: (): GroupVersionResource => ({ group: 'apps', version: 'v1', resource: 'controllerrevisions' }),
  statefulSets: (): GroupVersionResource => ({ group: 'apps', version: 'v1', resource: 'statefulsets' }),
  persistentVolumeClaims: (): GroupVersionResource => ({
    group: '',
    version: 'v1',
    resource: 'persistentvolumeclaims',
  }),
  jobs: (): GroupVersionResource => ({ group: 'batch', version: 'v1', resource: 'jobs' }),
  cronJobs: (): GroupVersionResource => ({ group: 'batch', version: 'v1', resource: 'cronjobs' }),
};
