import { defineResource, type ResourceType } from '../../../catalog.js';
import { objectSchema } from '../../../meta-schema.js';
import { group } from '../../../names.js';
import { s } from '../../../schema.js';
import { webhookConfigurationColumns, webhookFields } from './webhook.js';

export const validatingWebhookConfigurationSchema = objectSchema({
  webhooks: s.keyed(s.obj(webhookFields({ objectSelector: 10, matchConditions: 11 })), ['name'], { tag: 2 }),
});

/** `admissionregistration.<suffix>/v1` ValidatingWebhookConfiguration (cluster scoped). */
export const validatingWebhookConfiguration = (): ResourceType =>
  defineResource({
    group: group('admissionregistration'),
    version: 'v1',
    kind: 'ValidatingWebhookConfiguration',
    plural: 'validatingwebhookconfigurations',
    singular: 'validatingwebhookconfiguration',
    categories: ['api-extensions'],
    namespaced: false,
    hasSpec: false,
    tableColumns: webhookConfigurationColumns,
    schema: validatingWebhookConfigurationSchema,
  });
