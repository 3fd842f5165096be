import type { ApiObject } from '../../../types.js';
import { classAnnotationKey } from '../../../names.js';

const ACCESS_MODES: ReadonlyArray<[string, string]> = [
  ['ReadWriteOnce', 'RWO'],
  ['ReadOnlyMany', 'ROX'],
  ['ReadWriteMany', 'RWX'],
  ['ReadWriteOncePod', 'RWOP'],
];

/** Kubernetes' GetAccessModesAsString: `RWO,ROX,RWX,RWOP` in that order, each once. */
export function accessModesString(modes: readonly string[] | undefined): string {
  const have = new Set(modes ?? []);
  return ACCESS_MODES.filter(([mode]) => have.has(mode))
    .map(([, short]) => short)
    .join(',');
}

/** A quantity as stored (`'1Gi'`), `'0'` when absent (an empty Quantity prints as 0). */
export function quantityCell(q: unknown): string {
  return typeof q === 'string' || typeof q === 'number' ? String(q) : '0';
}

interface VolumeLike {
  metadata: ApiObject['metadata'];
  spec?: { storageClassName?: string | null };
}

/** The class of a volume or claim: the old beta annotation first, then `spec.storageClassName` (Kubernetes' helpers). */
export function storageClassOf(o: VolumeLike): string {
  const annotated = o.metadata.annotations?.[classAnnotationKey('beta-storage-class')];
  if (annotated !== undefined) return annotated;
  return o.spec?.storageClassName ?? '';
}

/** The phase column: `Terminating` once deletion started, else `status.phase`. */
export function phaseCell(o: ApiObject): string {
  if (o.metadata.deletionTimestamp) return 'Terminating';
  return (o.status as { phase?: string } | undefined)?.phase ?? '';
}
