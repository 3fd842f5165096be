import { defineResource, type ResourceType } from '../../../catalog.js';
import { objectSchema } from '../../../meta-schema.js';
import { group } from '../../../names.js';
import { s } from '../../../schema.js';
import { ageColumn, column, nameColumn } from '../../../table-columns.js';
import type { ApiObject } from '../../../types.js';
import { flowControlCondition } from './flow-schema.js';

export const priorityLevelConfigurationSchema = objectSchema({
  spec: s.obj(
    {
      type: s.str({ tag: 1 }),
      limited: s.obj(
        {
          nominalConcurrencyShares: s.int32({ tag: 1 }),
          limitResponse: s.obj(
            {
              type: s.str({ tag: 1 }),
              queuing: s.obj(
                { queues: s.int32({ tag: 1 }), handSize: s.int32({ tag: 2 }), queueLengthLimit: s.int32({ tag: 3 }) },
                { tag: 2 },
              ),
            },
            { tag: 2 },
          ),
          lendablePercent: s.int32({ tag: 3 }),
          borrowingLimitPercent: s.int32({ tag: 4 }),
        },
        { tag: 2 },
      ),
      exempt: s.obj(
        { nominalConcurrencyShares: s.int32({ tag: 1 }), lendablePercent: s.int32({ tag: 2 }) },
        { tag: 3 },
      ),
    },
    { tag: 2 },
  ),
  status: s.obj({ conditions: s.keyed(flowControlCondition, ['type'], { tag: 1 }) }, { tag: 3 }),
});

interface LimitedView {
  nominalConcurrencyShares?: number;
  limitResponse?: { queuing?: { queues?: number; handSize?: number; queueLengthLimit?: number } };
}

function limited(o: ApiObject): LimitedView | undefined {
  return (o as { spec?: { limited?: LimitedView } }).spec?.limited;
}

/** A limited level's number, `<none>` for the exempt level or a level that does not queue (kubectl's cells). */
function cell(pick: (l: LimitedView) => number | undefined): (o: ApiObject) => number | string {
  return (o) => {
    const l = limited(o);
    const v = l ? pick(l) : undefined;
    return v ?? '<none>';
  };
}

export const priorityLevelConfiguration = (): ResourceType =>
  defineResource({
    group: group('flowcontrol.apiserver'),
    version: 'v1',
    kind: 'PriorityLevelConfiguration',
    plural: 'prioritylevelconfigurations',
    singular: 'prioritylevelconfiguration',
    namespaced: false,
    subresources: ['status'],
    tableColumns: [
      nameColumn,
      column('Type', 'string', (o) => (o as { spec?: { type?: string } }).spec?.type ?? ''),
      column(
        'NominalConcurrencyShares',
        'string',
        cell((l) => l.nominalConcurrencyShares ?? 0),
      ),
      column(
        'Queues',
        'string',
        cell((l) => l.limitResponse?.queuing?.queues),
      ),
      column(
        'HandSize',
        'string',
        cell((l) => l.limitResponse?.queuing?.handSize),
      ),
      column(
        'QueueLengthLimit',
        'string',
        cell((l) => l.limitResponse?.queuing?.queueLengthLimit),
      ),
      ageColumn,
    ],
    schema: priorityLevelConfigurationSchema,
  });
