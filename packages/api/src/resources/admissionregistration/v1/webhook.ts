import { labelSelector } from '../../../meta-schema.js';
import { s } from '../../../schema.js';
import type { ValidatingWebhookConfiguration } from '../../../wire/admission-webhook.js';
import { ageColumn, column, nameColumn } from '../../../table-columns.js';
import type { TableColumn } from '../../../catalog.js';
import { matchConditions, ruleWithOperations } from './match-resources.js';

// Field numbers of Kubernetes' admissionregistration/v1 generated.proto (ValidatingWebhook,
// MutatingWebhook, WebhookClientConfig, ServiceReference). Required fields and enums are left
// to validation (Kubernetes' messages), not the decoder.

const serviceReference = s.obj(
  {
    namespace: s.str({ tag: 1 }),
    name: s.str({ tag: 2 }),
    path: s.str({ tag: 3 }),
    port: s.int32({ tag: 4 }),
  },
  { tag: 1 },
);

const webhookClientConfig = s.obj(
  { url: s.str({ tag: 3 }), service: serviceReference, caBundle: s.bytes({ tag: 2 }) },
  { tag: 2 },
);

/** ValidatingWebhook's fields (MutatingWebhook adds `reinvocationPolicy`; selectors and matchConditions differ in number). */
export function webhookFields(tags: { objectSelector: number; matchConditions: number }) {
  return {
    name: s.str({ tag: 1 }),
    clientConfig: webhookClientConfig,
    rules: s.atomic(ruleWithOperations, { tag: 3 }),
    failurePolicy: s.str({ tag: 4 }),
    matchPolicy: s.str({ tag: 9 }),
    namespaceSelector: { ...labelSelector, tag: 5 },
    objectSelector: { ...labelSelector, tag: tags.objectSelector },
    sideEffects: s.str({ tag: 6 }),
    timeoutSeconds: s.int32({ tag: 7 }),
    admissionReviewVersions: s.atomic(s.str(), { tag: 8 }),
    matchConditions: matchConditions(tags.matchConditions),
  };
}

/** Kubernetes' printer for both configuration kinds: NAME, WEBHOOKS, AGE. */
export const webhookConfigurationColumns: readonly TableColumn[] = [
  nameColumn,
  {
    ...column('Webhooks', 'integer', (o) => (o as ValidatingWebhookConfiguration).webhooks?.length ?? 0),
    description: 'Webhooks indicates the number of webhooks registered in this configuration',
  },
  ageColumn,
];
