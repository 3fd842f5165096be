import type { ScalePaths, TableColumn } from '../../../catalog.js';
import { s } from '../../../schema.js';
import { wideColumn } from '../../../table-columns.js';
import { NONE } from '../../../table-format.js';
import type { ApiObject } from '../../../types.js';

interface SelectorRequirement {
  key: string;
  operator: string;
  values?: string[];
}
interface WorkloadSpec {
  selector?: { matchLabels?: Record<string, string>; matchExpressions?: SelectorRequirement[] };
  template?: { spec?: { containers?: Array<{ name?: string; image?: string }> } };
}

const spec = (o: ApiObject): WorkloadSpec => (o.spec ?? {}) as WorkloadSpec;

function requirementText(r: SelectorRequirement): string {
  const values = `(${[...(r.values ?? [])].sort().join(',')})`;
  switch (r.operator) {
    case 'In':
      return `${r.key} in ${values}`;
    case 'NotIn':
      return `${r.key} notin ${values}`;
    case 'Exists':
      return r.key;
    default:
      return `!${r.key}`;
  }
}

/** The `spec.selector` of a workload, as Kubernetes' FormatLabelSelector. */
function labelSelectorText(o: ApiObject): string {
  return formatLabelSelector(spec(o).selector);
}

/** Kubernetes' FormatLabelSelector: requirements sorted by key, `<none>` when empty. */
export function formatLabelSelector(selector: WorkloadSpec['selector']): string {
  const sel = selector ?? {};
  const reqs: Array<[string, string]> = [
    ...Object.entries(sel.matchLabels ?? {}).map(([k, v]): [string, string] => [k, `${k}=${v}`]),
    ...(sel.matchExpressions ?? []).map((r): [string, string] => [r.key, requirementText(r)]),
  ];
  return (
    reqs
      .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
      .map(([, text]) => text)
      .join(',') || NONE
  );
}

const containers = (o: ApiObject): Array<{ name?: string; image?: string }> => spec(o).template?.spec?.containers ?? [];

/** The `-o wide` columns of pod-template workloads: Containers, Images, Selector. */
export const templateColumns: readonly TableColumn[] = [
  {
    ...wideColumn('Containers', 'string', (o) =>
      containers(o)
        .map((c) => c.name ?? '')
        .join(','),
    ),
    description: 'Names of each container in the template.',
  },
  {
    ...wideColumn('Images', 'string', (o) =>
      containers(o)
        .map((c) => c.image ?? '')
        .join(','),
    ),
    description: 'Images referenced by each container in the template.',
  },
  { ...wideColumn('Selector', 'string', labelSelectorText), description: 'Label selector for pods.' },
];

/** `spec.replicas`, `status.replicas` and `spec.selector`: the `scale` subresource of apps workloads. */
export const workloadScale: ScalePaths = {
  specReplicasPath: 'spec.replicas',
  statusReplicasPath: 'status.replicas',
  labelSelectorPath: 'spec.selector',
};

/** ReplicaSet and DaemonSet conditions (type, status, lastTransitionTime, reason, message), a list keyed by type. */
export const workloadConditions = s.keyed(
  s.obj(
    {
      type: s.str({ tag: 1 }),
      status: s.str({ tag: 2 }),
      lastTransitionTime: s.time({ tag: 3 }),
      reason: s.str({ tag: 4 }),
      message: s.str({ tag: 5 }),
    },
    { required: ['type', 'status'] },
  ),
  ['type'],
);
