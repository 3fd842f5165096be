import { defineResource, type ResourceType } from '../../../catalog.js';
import { objectSchema } from '../../../meta-schema.js';
import { group } from '../../../names.js';
import { s } from '../../../schema.js';
import { webhookConfigurationColumns, webhookFields } from './webhook.js';

const { matchConditions, ...fields } = webhookFields({ objectSelector: 11, matchConditions: 12 });

export const mutatingWebhookConfigurationSchema = objectSchema({
  webhooks: s.keyed(s.obj({ ...fields, reinvocationPolicy: s.str({ tag: 10 }), matchConditions }), ['name'], {
    tag: 2,
  }),
});

/** `admissionregistration.<suffix>/v1` MutatingWebhookConfiguration (cluster scoped). */
export const mutatingWebhookConfiguration = (): ResourceType =>
  defineResource({
    group: group('admissionregistration'),
    version: 'v1',
    kind: 'MutatingWebhookConfiguration',
    plural: 'mutatingwebhookconfigurations',
    singular: 'mutatingwebhookconfiguration',
    categories: ['api-extensions'],
    namespaced: false,
    hasSpec: false,
    tableColumns: webhookConfigurationColumns,
    schema: mutatingWebhookConfigurationSchema,
  });
