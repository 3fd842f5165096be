import {
  DescribeWriter,
  annotationsMultiline,
  asList,
  asObj,
  formatLabelSelector,
  labelsMultiline,
  str,
} from './writer.js';
import { writePodTemplate } from './pod-template.js';
import { describeEvents } from './events.js';
import type { DescribeContext } from './describers.js';

type Obj = Record<string, unknown>;

/** Running / Waiting (Pending) / Succeeded / Failed among the pods a controller owns. */
function podPhases(pods: Obj[]): string {
  const count = (phase: string): number => pods.filter((p) => str(asObj(p.status).phase) === phase).length;
  return `${count('Running')} Running / ${count('Pending')} Waiting / ${count('Succeeded')} Succeeded / ${count('Failed')} Failed`;
}

/** kubectl's ReplicaSetDescriber. */
export function describeReplicaSet(rs: Obj, c: DescribeContext): string {
  const w = new DescribeWriter();
  const meta = asObj(rs.metadata);
  const spec = asObj(rs.spec);
  const status = asObj(rs.status);
  w.write(0, `Name:\t${str(meta.name)}\n`);
  w.write(0, `Namespace:\t${str(meta.namespace)}\n`);
  w.write(0, `Selector:\t${formatLabelSelector(spec.selector)}\n`);
  labelsMultiline(w, { title: 'Labels', labels: meta.labels });
  annotationsMultiline(w, { title: 'Annotations', annotations: meta.annotations, skip: c.skipAnnotations });
  const owner = asList(meta.ownerReferences).find((r) => r.controller === true);
  if (owner) w.write(0, `Controlled By:\t${str(owner.kind)}/${str(owner.name)}\n`);
  w.write(0, `Replicas:\t${str(status.replicas ?? 0)} current / ${str(spec.replicas ?? 0)} desired\n`);
  w.write(
    0,
    `Pods Status:\t${c.podsError ? `error in fetching pods: ${c.podsError}` : podPhases(c.controlledPods ?? [])}\n`,
  );
  writePodTemplate(w, spec.template);
  const conditions = asList(status.conditions);
  if (conditions.length > 0) {
    w.write(0, 'Conditions:\n  Type\tStatus\tReason\n');
    w.write(1, '----\t------\t------\n');
    for (const cond of conditions) w.write(1, `${str(cond.type)} \t${str(cond.status)}\t${str(cond.reason)}\n`);
  }
  if (c.events) describeEvents(w, c.events);
  return w.toString();
}
