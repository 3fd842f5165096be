import { DescribeWriter, annotationsMultiline, asObj, labelsMultiline, str, tolerationsMultiline } from './writer.js';
import { describeContainers, describeVolumes } from './containers.js';

/** kubectl's DescribePodTemplate, into `w`. */
export function writePodTemplate(w: DescribeWriter, template: unknown): void {
  const t = asObj(template);
  const meta = asObj(t.metadata);
  const spec = asObj(t.spec);
  w.write(0, 'Pod Template:\n');
  labelsMultiline(w, { title: '  Labels', labels: meta.labels });
  if (Object.keys(asObj(meta.annotations)).length > 0) {
    annotationsMultiline(w, { title: '  Annotations', annotations: meta.annotations, skip: [] });
  }
  if (str(spec.serviceAccountName)) w.write(1, `Service Account:\t${str(spec.serviceAccountName)}\n`);
  if (Array.isArray(spec.initContainers) && spec.initContainers.length > 0) {
    describeContainers(w, { label: 'Init Containers', containers: spec.initContainers, space: '  ' });
  }
  describeContainers(w, { label: 'Containers', containers: spec.containers, space: '  ' });
  describeVolumes(w, { volumes: spec.volumes, space: '  ' });
  if (str(spec.priorityClassName)) w.write(1, `Priority Class Name:\t${str(spec.priorityClassName)}\n`);
  labelsMultiline(w, { title: '  Node-Selectors', labels: spec.nodeSelector });
  tolerationsMultiline(w, { title: '  Tolerations', tolerations: spec.tolerations });
}

/** A pod template as its own text (`rollout history --revision`, `rollout undo --dry-run`): tabs not aligned, as kubectl prints it. */
export function describePodTemplate(template: unknown): string {
  const w = new DescribeWriter();
  writePodTemplate(w, template);
  return w.raw();
}
