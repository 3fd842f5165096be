// Lets the group system:monitoring (the compose cluster's Prometheus token) read every node
// agent's /metrics (nodes/metrics); the control plane's /metrics it may read already.
// Usage: node deploy/monitoring-rbac.mjs <admin svcconfig>. Idempotent.
import { group } from '../packages/api/dist/index.js';
import { loadSvcconfig, RestClient } from '../packages/client/dist/index.js';

const client = new RestClient(loadSvcconfig(process.argv[2]));
const rbac = `/apis/${group('rbac.authorization')}/v1`;
const name = 'svc-compose:node-metrics';
const objects = [
  [
    `${rbac}/clusterroles`,
    { metadata: { name }, rules: [{ apiGroups: [''], resources: ['nodes/metrics'], verbs: ['get'] }] },
  ],
  [
    `${rbac}/clusterrolebindings`,
    {
      metadata: { name },
      roleRef: { apiGroup: group('rbac.authorization'), kind: 'ClusterRole', name },
      subjects: [{ apiGroup: group('rbac.authorization'), kind: 'Group', name: 'system:monitoring' }],
    },
  ],
];
try {
  for (const [path, body] of objects) {
    const r = await client.request('PUT', `${path}/${name}`, { body });
    if (r.status === 404) {
      const c = await client.request('POST', path, { body });
      if (c.status >= 300) throw new Error(`POST ${path}: ${c.status} ${c.body.toString()}`);
    } else if (r.status >= 300) {
      throw new Error(`PUT ${path}/${name}: ${r.status} ${r.body.toString()}`);
    }
  }
} finally {
  client.close();
}
