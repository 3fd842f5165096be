import { batchKey, type Job, type Pod } from '@svc/api';
import { nameIsDnsSubdomain } from '@svc/machinery';
import { newControllerRef } from './controller-ref.js';

/** The pod a Job creates (Kubernetes' GetPodFromTemplate plus the tracking finalizer and, for Indexed Jobs, the index). */
export function podForJob(job: Job, index?: number): Pod {
  const t = job.spec.template;
  const name = job.metadata.name ?? '';
  const base = index === undefined ? name : `${name}-${index}`;
  const metadata: Pod['metadata'] = {
    generateName: nameIsDnsSubdomain(`${base}-`, true) ? `${base}-` : base,
    labels: { ...(t.metadata?.labels ?? {}) },
    annotations: { ...(t.metadata?.annotations ?? {}) },
    finalizers: [...(t.metadata?.finalizers ?? []), batchKey('job-tracking')],
    ownerReferences: [newControllerRef(job, 'batch/v1', 'Job')],
  };
  const spec = structuredClone(t.spec);
  if (index !== undefined) {
    const key = batchKey('job-completion-index');
    (metadata.annotations ??= {})[key] = String(index);
    (metadata.labels ??= {})[key] = String(index);
    spec.hostname ??= `${name}-${index}`;
    for (const c of [...(spec.initContainers ?? []), ...spec.containers]) {
      const env = (c.env ??= []);
      if (env.some((e) => e.name === 'JOB_COMPLETION_INDEX')) continue;
      env.push({
        name: 'JOB_COMPLETION_INDEX',
        // apiVersion as Kubernetes' pod defaults would fill it in.
        valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: `metadata.annotations['${key}']` } },
      });
    }
  }
  return { apiVersion: 'v1', kind: 'Pod', metadata, spec };
}
