import { gatewayApiCrdDir } from '@svc/testing';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { fieldErrorMessage, group, naming, useNaming, type FieldError } from '@svc/api';
import type { Crd, CrdVersion } from './crd.js';
import { validateCrd, validateCrdUpdate } from './crd-validation.js';

const CERT_PEM = `-----BEGIN CERTIFICATE-----
MIIBlDCCATmgAwIBAgIUHKMUpX2wHtTo4nPMtTzl8YZUvYkwCgYIKoZIzj0EAwIw
HjEcMBoGA1UEAwwTY3JkLXZhbGlkYXRpb24tdGVzdDAgFw0yNjExMjcwOTUyNDZa
GA8yMTI2MTEwMzA5NTI0NlowHjEcMBoGA1UEAwwTY3JkLXZhbGlkYXRpb24tdGVz
dDBZMBMGByqGSM49AgEGCCqGSM49AwEHA0IABHqbMhBeETk0+QffPuMS8v3FNbYJ
JSnqIrhbzRVioSkJhX6QRHk52vnNFBPsF18n0U2gwQ5ucy1CoDf2pJVUNT6jUzBR
MB0GA1UdDgQWBBSHuDGs4aGi5AiHh3lPBlA0+on4pDAfBgNVHSMEGDAWgBSHuDGs
4aGi5AiHh3lPBlA0+on4pDAPBgNVHRMBAf8EBTADAQH/MAoGCCqGSM49BAMCA0kA
MEYCIQDk+mwKU8Rtb44N0XHkCoaRaj15XrjQslopQNNi9B3HOQIhAN1fUAxnY6q+
UnRegftvf13u5s8YV/EZAWPDBkk08ciC
-----END CERTIFICATE-----
`;
const CA_BUNDLE = Buffer.from(CERT_PEM).toString('base64');
const BAD_CA_BUNDLE = Buffer.from('not a certificate').toString('base64');

const DNS1035 =
  "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";
const DNS1123_SUBDOMAIN =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const URL_FORM = '; desired format: https://host[/path]';

function schema(): Record<string, unknown> {
  return {
    type: 'object',
    properties: {
      metadata: { type: 'object', properties: { name: { type: 'string' } } },
      spec: {
        type: 'object',
        properties: {
          replicas: { type: 'integer' },
          color: { type: 'string', enum: ['red', 'blue'] },
          enabled: { type: 'boolean' },
          size: { type: 'number' },
          tags: { type: 'object', additionalProperties: { type: 'string' } },
          list: { type: 'array', items: { type: 'string' } },
          a: { type: 'string' },
          b: { type: 'string' },
          c: { type: 'string' },
          d: { type: 'string' },
          e: { type: 'string' },
        },
      },
      status: { type: 'object', properties: { replicas: { type: 'integer' }, selector: { type: 'string' } } },
    },
  };
}

function version(name: string, extra: Partial<CrdVersion> = {}): CrdVersion {
  return { name, served: true, storage: false, schema: { openAPIV3Schema: schema() }, ...extra };
}

function baseCrd(): Crd {
  return {
    apiVersion: `${group('apiextensions')}/v1`,
    kind: 'CustomResourceDefinition',
    metadata: { name: 'widgets.example.com' },
    spec: {
      group: 'example.com',
      names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
      scope: 'Namespaced',
      versions: [version('v1', { storage: true })],
    },
    status: { storedVersions: ['v1'] },
  };
}

/** Kubernetes' message, with an object or list value shown as `<object>` to keep the tables short. */
function show(e: FieldError): string {
  return typeof e.value === 'object' && e.value !== null
    ? fieldErrorMessage({ ...e, value: '<object>' }).replace('"<object>"', '<object>')
    : fieldErrorMessage(e);
}

function v0(c: Crd): CrdVersion {
  const v = c.spec.versions[0];
  if (!v) throw new Error('no version');
  return v;
}

function withGroup(c: Crd, g: string): void {
  c.spec.group = g;
  c.metadata.name = `${c.spec.names.plural}.${g}`;
}

function preserveUnknownMessage(): string {
  return `spec.preserveUnknownFields: Invalid value: true: cannot set to true, set ${naming().schemaExtensionPrefix}preserve-unknown-fields to true in spec.versions[*].schema instead`;
}

type Case = [name: string, mutate: (c: Crd) => void, want: string[]];

describe('validateCrd', () => {
  const cases: Case[] = [
    ['a valid definition', () => {}, []],
    // metadata.name
    [
      'name is not <plural>.<group>',
      (c) => (c.metadata.name = 'gadgets.example.com'),
      ['metadata.name: Invalid value: "gadgets.example.com": must be spec.names.plural+"."+spec.group'],
    ],
    // spec.group
    ['group missing', (c) => withGroup(c, ''), ['spec.group: Required value']],
    [
      'group not a DNS subdomain',
      (c) => withGroup(c, 'Example.com'),
      [`spec.group: Invalid value: "Example.com": ${DNS1123_SUBDOMAIN}`],
    ],
    [
      'group without a dot',
      (c) => withGroup(c, 'example'),
      ['spec.group: Invalid value: "example": should be a domain with at least one dot'],
    ],
    ['group with several dots', (c) => withGroup(c, 'stable.example.co.uk'), []],
    // spec.scope
    ['scope missing', (c) => (c.spec.scope = ''), ['spec.scope: Required value']],
    [
      'scope unknown',
      (c) => (c.spec.scope = 'Global'),
      ['spec.scope: Unsupported value: "Global": supported values: "Cluster", "Namespaced"'],
    ],
    ['scope Cluster', (c) => (c.spec.scope = 'Cluster'), []],
    // spec.names
    [
      'plural not a DNS-1035 label',
      (c) => {
        c.spec.names.plural = 'Widgets';
        c.metadata.name = 'Widgets.example.com';
      },
      [`spec.names.plural: Invalid value: "Widgets": ${DNS1035}`],
    ],
    [
      'singular not a DNS-1035 label',
      (c) => (c.spec.names.singular = 'widget_'),
      [`spec.names.singular: Invalid value: "widget_": ${DNS1035}`],
    ],
    [
      'kind missing: singular and listKind cannot be defaulted',
      (c) => {
        c.spec.names = { plural: 'widgets', kind: '' };
      },
      ['spec.names.singular: Required value', 'spec.names.kind: Required value', 'spec.names.listKind: Required value'],
    ],
    ['singular and listKind defaulted from kind', (c) => (c.spec.names = { plural: 'widgets', kind: 'Widget' }), []],
    [
      'kind with a character a DNS-1035 label cannot have',
      (c) => (c.spec.names.kind = 'Wid_get'),
      [`spec.names.kind: Invalid value: "Wid_get": may have mixed case, but should otherwise match: ${DNS1035}`],
    ],
    [
      'listKind with a character a DNS-1035 label cannot have',
      (c) => (c.spec.names.listKind = 'Widget.List'),
      [
        `spec.names.listKind: Invalid value: "Widget.List": may have mixed case, but should otherwise match: ${DNS1035}`,
      ],
    ],
    [
      'listKind equal to kind',
      (c) => (c.spec.names.listKind = 'Widget'),
      ['spec.names.listKind: Invalid value: "Widget": kind and listKind may not be the same'],
    ],
    [
      'a short name not a DNS-1035 label',
      (c) => (c.spec.names.shortNames = ['wd', 'W']),
      [`spec.names.shortNames[1]: Invalid value: "W": ${DNS1035}`],
    ],
    ['short names and categories', (c) => Object.assign(c.spec.names, { shortNames: ['wd'], categories: ['all'] }), []],
    [
      'a category not a DNS-1035 label',
      (c) => (c.spec.names.categories = ['all', 'my_things']),
      [`spec.names.categories[1]: Invalid value: "my_things": ${DNS1035}`],
    ],
    // spec.versions
    [
      'version name not a DNS-1035 label (also checked as spec.version)',
      (c) => {
        v0(c).name = 'V1';
        c.status = { storedVersions: ['V1'] };
      },
      [`spec.versions[0].name: Invalid value: "V1": ${DNS1035}`, `spec.version: Invalid value: "V1": ${DNS1035}`],
    ],
    [
      'two versions with one name',
      (c) => c.spec.versions.push(version('v1')),
      ['spec.versions: Invalid value: <object>: must contain unique version names'],
    ],
    [
      'no storage version',
      (c) => (v0(c).storage = false),
      ['spec.versions: Invalid value: <object>: must have exactly one version marked as storage version'],
    ],
    [
      'two storage versions',
      (c) => {
        c.spec.versions.push(version('v2', { storage: true }));
        c.status = { storedVersions: ['v1', 'v2'] };
      },
      ['spec.versions: Invalid value: <object>: must have exactly one version marked as storage version'],
    ],
    [
      'no versions',
      (c) => {
        c.spec.versions = [];
        delete c.status;
      },
      [
        'spec.versions: Invalid value: <object>: must have exactly one version marked as storage version',
        'status.storedVersions: Invalid value: <object>: must have at least one stored version',
      ],
    ],
    ['two versions, one served and stored', (c) => c.spec.versions.push(version('v1beta1', { served: false })), []],
    [
      'a version without a schema',
      (c) => delete v0(c).schema,
      ['spec.versions[0].schema.openAPIV3Schema: Required value: schemas are required'],
    ],
    [
      'deprecationWarning on a version that is not deprecated',
      (c) => (v0(c).deprecationWarning = 'old'),
      ['spec.versions[0].deprecationWarning: Invalid value: "old": can only be set for deprecated versions'],
    ],
    [
      'deprecationWarning empty',
      (c) => Object.assign(v0(c), { deprecated: true, deprecationWarning: '' }),
      ['spec.versions[0].deprecationWarning: Invalid value: "": must not be an empty string'],
    ],
    [
      'deprecationWarning too long',
      (c) => Object.assign(v0(c), { deprecated: true, deprecationWarning: 'x'.repeat(257) }),
      [`spec.versions[0].deprecationWarning: Invalid value: "${'x'.repeat(257)}": must be <= 256 characters long`],
    ],
    [
      'deprecationWarning with a control character',
      (c) => Object.assign(v0(c), { deprecated: true, deprecationWarning: 'é\tx' }),
      [
        'spec.versions[0].deprecationWarning: Invalid value: "é\\tx": must only contain printable UTF-8 characters; non-printable character found at index 2',
      ],
    ],
    [
      'deprecationWarning on a deprecated version',
      (c) => Object.assign(v0(c), { deprecated: true, deprecationWarning: 'v1 is going away — use v2' }),
      [],
    ],
    // schemas (the schema engine's rules, at Kubernetes' paths)
    [
      'a non-structural schema in the only version: reported under spec.validation',
      (c) => (v0(c).schema = { openAPIV3Schema: { type: 'object', properties: { spec: {} } } }),
      [
        'spec.validation.openAPIV3Schema.properties[spec].type: Required value: must not be empty for specified object fields',
      ],
    ],
    [
      'a non-structural schema in one of two versions with different schemas',
      (c) =>
        c.spec.versions.push(
          version('v2', { schema: { openAPIV3Schema: { type: 'object', properties: { spec: {} } } } }),
        ),
      [
        'spec.versions[1].schema.openAPIV3Schema.properties[spec].type: Required value: must not be empty for specified object fields',
      ],
    ],
    [
      'with the status subresource the root must be an object',
      (c) => {
        v0(c).subresources = { status: {} };
        v0(c).schema = { openAPIV3Schema: { type: 'string' } };
      },
      [
        'spec.validation.openAPIV3Schema.type: Invalid value: "string": only "object" is allowed as the type at the root of the schema if the status subresource is enabled',
        'spec.validation.openAPIV3Schema.type: Invalid value: "string": must be object at the root',
      ],
    ],
    // subresources
    ['status and scale subresources', (c) => (v0(c).subresources = { status: {}, scale: scale() }), []],
    [
      'status subresource that is not an empty object',
      (c) => (v0(c).subresources = { status: { enabled: true } }),
      ['spec.subresources.status: Invalid value: <object>: must be an empty object'],
    ],
    [
      'scale without specReplicasPath',
      (c) => (v0(c).subresources = { scale: { ...scale(), specReplicasPath: '' } }),
      ['spec.subresources.scale.specReplicasPath: Required value'],
    ],
    [
      'scale without statusReplicasPath',
      (c) => (v0(c).subresources = { scale: { ...scale(), statusReplicasPath: '' } }),
      ['spec.subresources.scale.statusReplicasPath: Required value'],
    ],
    [
      'scale specReplicasPath without a leading dot',
      (c) => (v0(c).subresources = { scale: { ...scale(), specReplicasPath: 'spec.replicas' } }),
      [
        'spec.subresources.scale.specReplicasPath: Invalid value: "spec.replicas": must be a simple json path starting with .',
      ],
    ],
    [
      'scale specReplicasPath outside .spec',
      (c) => (v0(c).subresources = { scale: { ...scale(), specReplicasPath: '.status.replicas' } }),
      [
        'spec.subresources.scale.specReplicasPath: Invalid value: ".status.replicas": should be a json path under .spec',
      ],
    ],
    [
      'scale statusReplicasPath outside .status',
      (c) => (v0(c).subresources = { scale: { ...scale(), statusReplicasPath: '.spec.replicas' } }),
      [
        'spec.subresources.scale.statusReplicasPath: Invalid value: ".spec.replicas": should be a json path under .status',
      ],
    ],
    [
      'scale statusReplicasPath naming .status itself',
      (c) => (v0(c).subresources = { scale: { ...scale(), statusReplicasPath: '.status' } }),
      ['spec.subresources.scale.statusReplicasPath: Invalid value: ".status": should be a json path under .status'],
    ],
    [
      'scale labelSelectorPath outside .spec and .status',
      (c) => (v0(c).subresources = { scale: { ...scale(), labelSelectorPath: '.metadata.labels' } }),
      [
        'spec.subresources.scale.labelSelectorPath: Invalid value: ".metadata.labels": should be a json path under either .spec or .status',
      ],
    ],
    [
      'scale labelSelectorPath under .spec',
      (c) => (v0(c).subresources = { scale: { ...scale(), labelSelectorPath: '.spec.selector' } }),
      [],
    ],
    [
      'different subresources per version: reported under the version',
      (c) => {
        c.spec.versions.push(version('v2', { subresources: { scale: { ...scale(), specReplicasPath: '.replicas' } } }));
      },
      [
        'spec.versions[1].subresources.scale.specReplicasPath: Invalid value: ".replicas": should be a json path under .spec',
      ],
    ],
    // additionalPrinterColumns
    [
      'printer columns of every type and format, filters in a path, negative priority',
      (c) =>
        (v0(c).additionalPrinterColumns = [
          { name: 'Replicas', type: 'integer', format: 'int32', jsonPath: '.spec.replicas', priority: -1 },
          { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
          { name: 'Size', type: 'number', format: 'double', jsonPath: '.spec.size' },
          { name: 'On', type: 'boolean', jsonPath: '.spec.enabled' },
          { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
        ]),
      [],
    ],
    [
      'printer column without name, type and jsonPath',
      (c) => (v0(c).additionalPrinterColumns = [{ name: '', type: '', jsonPath: '' }]),
      [
        'spec.additionalPrinterColumns[0].name: Required value',
        'spec.additionalPrinterColumns[0].type: Required value: must be one of boolean,date,integer,number,string',
        'spec.additionalPrinterColumns[0].JSONPath: Required value',
      ],
    ],
    [
      'printer column with an unknown type and format',
      (c) => (v0(c).additionalPrinterColumns = [{ name: 'X', type: 'float', format: 'uuid', jsonPath: '.spec.size' }]),
      [
        'spec.additionalPrinterColumns[0].type: Invalid value: "float": must be one of boolean,date,integer,number,string',
        'spec.additionalPrinterColumns[0].format: Invalid value: "uuid": must be one of byte,date,date-time,double,float,int32,int64,password',
      ],
    ],
    [
      'printer column jsonPath without a leading dot',
      (c) => (v0(c).additionalPrinterColumns = [{ name: 'X', type: 'string', jsonPath: 'spec.color' }]),
      [
        'spec.additionalPrinterColumns[0].JSONPath: Invalid value: "spec.color": must be a simple json path starting with .',
      ],
    ],
    [
      'different printer columns per version: reported under the version',
      (c) => {
        v0(c).additionalPrinterColumns = [{ name: 'X', type: 'string', jsonPath: '.spec.color' }];
        c.spec.versions.push(
          version('v2', { additionalPrinterColumns: [{ name: 'X', type: 'text', jsonPath: '.spec.color' }] }),
        );
      },
      [
        'spec.versions[1].additionalPrinterColumns[0].type: Invalid value: "text": must be one of boolean,date,integer,number,string',
      ],
    ],
    // selectableFields
    [
      'selectable string, enum, integer, boolean and map-value fields',
      (c) =>
        (v0(c).selectableFields = [
          { jsonPath: '.spec.a' },
          { jsonPath: '.spec.color' },
          { jsonPath: '.spec.replicas' },
          { jsonPath: '.spec.enabled' },
          { jsonPath: '.spec.tags.team' },
        ]),
      [],
    ],
    [
      'selectable field without jsonPath',
      (c) => (v0(c).selectableFields = [{ jsonPath: '' }]),
      ['spec.selectableFields[0].jsonPath: Required value'],
    ],
    [
      'selectable field not in the schema',
      (c) => (v0(c).selectableFields = [{ jsonPath: '.spec.missing' }]),
      [
        'spec.selectableFields[0].jsonPath: Invalid value: ".spec.missing": is an invalid path: does not refer to a valid field',
      ],
    ],
    [
      'selectable field without a leading dot',
      (c) => (v0(c).selectableFields = [{ jsonPath: 'spec.a' }]),
      ['spec.selectableFields[0].jsonPath: Invalid value: "spec.a": is an invalid path: expected [ or . but got: spec'],
    ],
    [
      'selectable field with array notation',
      (c) => (v0(c).selectableFields = [{ jsonPath: ".spec['a']" }]),
      [
        `spec.selectableFields[0].jsonPath: Invalid value: ".spec['a']": is an invalid path: array notation is not allowed`,
      ],
    ],
    [
      'selectable field in metadata',
      (c) => (v0(c).selectableFields = [{ jsonPath: '.metadata.name' }]),
      ['spec.selectableFields[0].jsonPath: Invalid value: ".metadata.name": must not point to fields in metadata'],
    ],
    [
      'selectable field of type number and object',
      (c) => (v0(c).selectableFields = [{ jsonPath: '.spec.size' }, { jsonPath: '.spec.tags' }]),
      [
        'spec.selectableFields[0].jsonPath: Invalid value: ".spec.size": must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed.',
        'spec.selectableFields[1].jsonPath: Invalid value: ".spec.tags": must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed.',
      ],
    ],
    [
      'selectable field twice',
      (c) => (v0(c).selectableFields = [{ jsonPath: '.spec.a' }, { jsonPath: '.spec.a' }]),
      ['spec.selectableFields[1].jsonPath: Duplicate value: ".spec.a"'],
    ],
    [
      'nine selectable fields',
      (c) =>
        (v0(c).selectableFields = ['a', 'b', 'c', 'd', 'e', 'color', 'replicas', 'enabled', 'tags.x'].map((f) => ({
          jsonPath: `.spec.${f}`,
        }))),
      ['spec.selectableFields: Too many: must have at most 8 items'],
    ],
    [
      'selectable fields without a schema',
      (c) => {
        delete v0(c).schema;
        v0(c).selectableFields = [{ jsonPath: '.spec.a' }];
      },
      [
        'spec.versions[0].schema.openAPIV3Schema: Required value: schemas are required',
        'spec.selectableFields: Invalid value: "": selectableFields may only be set when validations.schema is included',
      ],
    ],
    [
      'same selectable fields, different schemas: each version against its own schema',
      (c) => {
        const s = schema();
        c.spec.versions.push(version('v2', { schema: { openAPIV3Schema: { ...s, description: 'v2' } } }));
        for (const v of c.spec.versions) v.selectableFields = [{ jsonPath: '.spec.missing' }];
      },
      [
        'spec.versions[0].selectableFields[0].jsonPath: Invalid value: ".spec.missing": is an invalid path: does not refer to a valid field',
        'spec.versions[1].selectableFields[0].jsonPath: Invalid value: ".spec.missing": is an invalid path: does not refer to a valid field',
      ],
    ],
    [
      'same schemas, selectable fields only in one version',
      (c) => {
        c.spec.versions.push(version('v2', { selectableFields: [{ jsonPath: '.spec.a' }] }));
      },
      [],
    ],
    // preserveUnknownFields
    ['preserveUnknownFields false', (c) => (c.spec.preserveUnknownFields = false), []],
    ['preserveUnknownFields true', (c) => (c.spec.preserveUnknownFields = true), [preserveUnknownMessage()]],
    [
      'preserveUnknownFields true with defaults in the schema',
      (c) => {
        c.spec.preserveUnknownFields = true;
        v0(c).schema = {
          openAPIV3Schema: {
            type: 'object',
            properties: { spec: { type: 'object', properties: { a: { type: 'string', default: 'x' } } } },
          },
        };
      },
      [
        'spec.preserveUnknownFields: Invalid value: true: must be false in order to use defaults in the schema',
        preserveUnknownMessage(),
      ],
    ],
    [
      'preserveUnknownFields true with webhook conversion',
      (c) => {
        c.spec.preserveUnknownFields = true;
        c.spec.conversion = webhook({ service: service() });
      },
      [
        'spec.conversion.strategy: Invalid value: "Webhook": must be None if spec.preserveUnknownFields is true',
        preserveUnknownMessage(),
      ],
    ],
    // conversion
    ['conversion None', (c) => (c.spec.conversion = { strategy: 'None' }), []],
    [
      'conversion strategy missing',
      (c) => (c.spec.conversion = { strategy: '' }),
      ['spec.conversion.strategy: Required value'],
    ],
    [
      'conversion strategy unknown',
      (c) => (c.spec.conversion = { strategy: 'Magic' }),
      ['spec.conversion.strategy: Unsupported value: "Magic": supported values: "None", "Webhook"'],
    ],
    [
      'None with a client config and review versions',
      (c) =>
        (c.spec.conversion = {
          strategy: 'None',
          webhook: { clientConfig: { url: 'https://example.com' }, conversionReviewVersions: ['v1'] },
        }),
      [
        'spec.conversion.webhookClientConfig: Forbidden: should not be set when strategy is not set to Webhook',
        'spec.conversion.conversionReviewVersions: Forbidden: should not be set when strategy is not set to Webhook',
      ],
    ],
    ['None with an empty webhook', (c) => (c.spec.conversion = { strategy: 'None', webhook: {} }), []],
    [
      'Webhook without webhook',
      (c) => (c.spec.conversion = { strategy: 'Webhook' }),
      [
        'spec.conversion.webhookClientConfig: Required value: required when strategy is set to Webhook',
        'spec.conversion.conversionReviewVersions: Required value',
      ],
    ],
    ['Webhook to a service', (c) => (c.spec.conversion = webhook({ service: service() })), []],
    [
      'Webhook to a service with a port and a path',
      (c) => (c.spec.conversion = webhook({ service: { ...service(), port: 8443, path: '/convert/v1' } })),
      [],
    ],
    ['Webhook to a URL', (c) => (c.spec.conversion = webhook({ url: 'https://example.com:8443/convert' })), []],
    [
      'Webhook to both a URL and a service',
      (c) => (c.spec.conversion = webhook({ url: 'https://example.com', service: service() })),
      ['spec.conversion.webhookClientConfig: Required value: exactly one of url or service is required'],
    ],
    [
      'Webhook to neither a URL nor a service',
      (c) => (c.spec.conversion = webhook({})),
      ['spec.conversion.webhookClientConfig: Required value: exactly one of url or service is required'],
    ],
    [
      'Webhook URL over http',
      (c) => (c.spec.conversion = webhook({ url: 'http://example.com' })),
      [
        `spec.conversion.webhookClientConfig.url: Invalid value: "http": 'https' is the only allowed URL scheme${URL_FORM}`,
      ],
    ],
    [
      'Webhook URL without a host',
      (c) => (c.spec.conversion = webhook({ url: 'https:///convert' })),
      [`spec.conversion.webhookClientConfig.url: Invalid value: "": host must be specified${URL_FORM}`],
    ],
    [
      'Webhook URL with user information, query and fragment',
      (c) => (c.spec.conversion = webhook({ url: 'https://admin:secret@example.com/convert?x=1#top' })),
      [
        'spec.conversion.webhookClientConfig.url: Invalid value: "admin:secret": user information is not permitted in the URL',
        'spec.conversion.webhookClientConfig.url: Invalid value: "top": fragments are not permitted in the URL',
        'spec.conversion.webhookClientConfig.url: Invalid value: "x=1": query parameters are not permitted in the URL',
      ],
    ],
    [
      'Webhook URL that does not parse',
      (c) => (c.spec.conversion = webhook({ url: '://example.com' })),
      [
        `spec.conversion.webhookClientConfig.url: Required value: url must be a valid URL: parse "://example.com": missing protocol scheme${URL_FORM}`,
      ],
    ],
    [
      'Webhook URL with a bad port',
      (c) => (c.spec.conversion = webhook({ url: 'https://example.com:https/' })),
      [
        `spec.conversion.webhookClientConfig.url: Required value: url must be a valid URL: parse "https://example.com:https/": invalid port ":https" after host${URL_FORM}`,
      ],
    ],
    [
      'Webhook service without name and namespace, port out of range',
      (c) => (c.spec.conversion = webhook({ service: { name: '', namespace: '', port: 70000 } })),
      [
        'spec.conversion.webhookClientConfig.service.name: Required value: service name is required',
        'spec.conversion.webhookClientConfig.service.namespace: Required value: service namespace is required',
        'spec.conversion.webhookClientConfig.service.port: Invalid value: 70000: port is not valid: must be between 1 and 65535, inclusive',
      ],
    ],
    [
      'Webhook service path without a leading slash',
      (c) => (c.spec.conversion = webhook({ service: { ...service(), path: 'convert' } })),
      // As Kubernetes, the first character is dropped before the segments are checked.
      [`spec.conversion.webhookClientConfig.service.path: Invalid value: "convert": must start with a '/'`],
    ],
    [
      'Webhook service path with an empty segment and an upper-case one',
      (c) => (c.spec.conversion = webhook({ service: { ...service(), path: '/a//Convert/' } })),
      [
        'spec.conversion.webhookClientConfig.service.path: Invalid value: "/a//Convert/": segment[1] may not be empty',
        'spec.conversion.webhookClientConfig.service.path: Invalid value: "/a//Convert/": segment[2]: ' +
          DNS1123_SUBDOMAIN,
      ],
    ],
    [
      'Webhook service path //',
      (c) => (c.spec.conversion = webhook({ service: { ...service(), path: '//' } })),
      ['spec.conversion.webhookClientConfig.service.path: Invalid value: "//": segment[0] may not be empty'],
    ],
    [
      'Webhook without review versions',
      (c) => (c.spec.conversion = webhook({ service: service() }, [])),
      ['spec.conversion.conversionReviewVersions: Required value'],
    ],
    [
      'Webhook review versions repeated',
      (c) => (c.spec.conversion = webhook({ service: service() }, ['v1', 'v1'])),
      ['spec.conversion.conversionReviewVersions[1]: Invalid value: "v1": duplicate version'],
    ],
    [
      'Webhook review versions none of them understood',
      (c) => (c.spec.conversion = webhook({ service: service() }, ['v2', 'V3'])),
      [
        `spec.conversion.conversionReviewVersions[1]: Invalid value: "V3": ${DNS1035}`,
        'spec.conversion.conversionReviewVersions: Invalid value: <object>: must include at least one of v1, v1beta1',
      ],
    ],
    [
      'Webhook review versions v1beta1 and an unknown one',
      (c) => (c.spec.conversion = webhook({ service: service() }, ['v2', 'v1beta1'])),
      [],
    ],
    [
      'an invalid caBundle is accepted on create',
      (c) => (c.spec.conversion = webhook({ service: service(), caBundle: BAD_CA_BUNDLE })),
      [],
    ],
    // status
    [
      'stored version missing from spec.versions',
      (c) => (c.status = { storedVersions: ['v1', 'v0'] }),
      ['status.storedVersions[1]: Invalid value: "v0": must appear in spec.versions'],
    ],
    [
      'stored versions without the storage version',
      (c) => (c.status = { storedVersions: ['v0'] }),
      [
        'status.storedVersions: Invalid value: <object>: must have the storage version v1',
        'status.storedVersions[0]: Invalid value: "v0": must appear in spec.versions',
      ],
    ],
    ['no stored versions yet: the storage version', (c) => delete c.status, []],
    [
      'accepted names checked as spec.names',
      (c) => (c.status = { storedVersions: ['v1'], acceptedNames: { plural: 'Widgets', kind: 'Widget' } }),
      [`status.acceptedNames.plural: Invalid value: "Widgets": ${DNS1035}`],
    ],
    // API approval of the naming's own groups
    [
      'a group under the naming suffix without approval',
      (c) => withGroup(c, group('widgets')),
      [
        `metadata.annotations[${approval()}]: Required value: protected groups must have approval annotation "${approval()}", see https://github.com/kubernetes/enhancements/pull/1111`,
      ],
    ],
    [
      'a group under the naming suffix with a bad approval',
      (c) => {
        withGroup(c, group('widgets'));
        c.metadata.annotations = { [approval()]: 'yes please' };
      },
      [
        `metadata.annotations[${approval()}]: Invalid value: "yes please": protected groups must have approval annotation "${approval()}" with either a URL or a reason starting with "unapproved", see https://github.com/kubernetes/enhancements/pull/1111`,
      ],
    ],
    [
      'a group under the naming suffix approved by a URL',
      (c) => {
        withGroup(c, group('widgets'));
        c.metadata.annotations = { [approval()]: 'https://github.com/example/widgets/pull/1' };
      },
      [],
    ],
    [
      'a group under the naming suffix, unapproved',
      (c) => {
        withGroup(c, group('widgets'));
        c.metadata.annotations = { [approval()]: 'unapproved, experimental' };
      },
      [],
    ],
  ];

  it.each(cases)('%s', (_name, mutate, want) => {
    const c = baseCrd();
    mutate(c);
    expect(validateCrd(c).map(show)).toEqual(want);
  });

  it('does not change its input', () => {
    const c = baseCrd();
    c.spec.names = { plural: 'widgets', kind: 'Widget' };
    c.spec.conversion = webhook({ service: service() });
    delete c.status;
    const before = JSON.stringify(c);
    validateCrd(c);
    expect(JSON.stringify(c)).toBe(before);
  });

  it('reports a CEL rule that does not compile at its rule', () => {
    const c = baseCrd();
    const validations = `${naming().schemaExtensionPrefix}validations`;
    v0(c).schema = {
      openAPIV3Schema: {
        type: 'object',
        properties: {
          spec: { type: 'object', properties: { a: { type: 'string' } }, [validations]: [{ rule: 'self.a >' }] },
        },
      },
    };
    const errs = validateCrd(c);
    expect(errs.map((e) => [e.path, e.type])).toEqual([
      [`spec.validation.openAPIV3Schema.properties[spec].${validations}[0].rule`, 'FieldValueInvalid'],
    ]);
  });
});

describe('validateCrdUpdate', () => {
  const established = (c: Crd): Crd => ({
    ...c,
    status: { ...c.status, conditions: [{ type: 'Established', status: 'True' }] },
  });

  const cases: Array<[name: string, old: (c: Crd) => Crd, mutate: (c: Crd) => void, want: string[]]> = [
    ['no change', (c) => c, () => {}, []],
    [
      'group changed',
      (c) => c,
      (c) => (c.spec.group = 'example.org'),
      ['spec.group: Invalid value: "example.org": field is immutable'],
    ],
    [
      'plural changed',
      (c) => c,
      (c) => (c.spec.names.plural = 'gadgets'),
      ['spec.names.plural: Invalid value: "gadgets": field is immutable'],
    ],
    ['scope changed before the CRD is Established', (c) => c, (c) => (c.spec.scope = 'Cluster'), []],
    [
      'scope changed once Established',
      established,
      (c) => (c.spec.scope = 'Cluster'),
      ['spec.scope: Invalid value: "Cluster": field is immutable'],
    ],
    ['kind changed before the CRD is Established', (c) => c, (c) => (c.spec.names.kind = 'Gadget'), []],
    [
      'kind changed once Established',
      established,
      (c) => (c.spec.names.kind = 'Gadget'),
      ['spec.names.kind: Invalid value: "Gadget": field is immutable'],
    ],
    ['singular changed once Established', established, (c) => (c.spec.names.singular = 'gadget'), []],
    [
      'preserveUnknownFields set to true',
      (c) => c,
      (c) => (c.spec.preserveUnknownFields = true),
      [preserveUnknownMessage()],
    ],
    [
      'preserveUnknownFields kept true',
      (c) => ({ ...c, spec: { ...c.spec, preserveUnknownFields: true } }),
      (c) => (c.spec.preserveUnknownFields = true),
      [],
    ],
    [
      'a stored version removed from spec.versions',
      (c) => ({
        ...c,
        spec: { ...c.spec, versions: [...c.spec.versions, version('v1beta1')] },
        status: { storedVersions: ['v1beta1', 'v1'] },
      }),
      (c) => (c.status = { storedVersions: ['v1beta1', 'v1'] }),
      ['status.storedVersions[0]: Invalid value: "v1beta1": must appear in spec.versions'],
    ],
    [
      'an invalid caBundle once Established',
      established,
      (c) => (c.spec.conversion = webhook({ service: service(), caBundle: BAD_CA_BUNDLE })),
      [
        `spec.conversion.webhookClientConfig.caBundle: Invalid value: "${BAD_CA_BUNDLE}": unable to load root certificates: unable to parse bytes as PEM block`,
      ],
    ],
    [
      'a caBundle without certificates once Established',
      established,
      (c) =>
        (c.spec.conversion = webhook({
          service: service(),
          caBundle: Buffer.from('-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n').toString('base64'),
        })),
      [
        expect.stringMatching(
          /caBundle: .*: unable to load root certificates: no valid certificate authority data seen$/,
        ) as string,
      ],
    ],
    [
      'a caBundle with a certificate once Established',
      established,
      (c) => (c.spec.conversion = webhook({ service: service(), caBundle: CA_BUNDLE })),
      [],
    ],
    [
      'an invalid caBundle before the CRD is Established',
      (c) => c,
      (c) => (c.spec.conversion = webhook({ service: service(), caBundle: BAD_CA_BUNDLE })),
      [],
    ],
    [
      'an invalid caBundle that was already invalid',
      (c) =>
        established({
          ...c,
          spec: { ...c.spec, conversion: webhook({ service: service(), caBundle: BAD_CA_BUNDLE }) },
        }),
      (c) => (c.spec.conversion = webhook({ url: 'https://example.com', caBundle: BAD_CA_BUNDLE })),
      [],
    ],
    [
      'review versions none of them understood, as before',
      (c) => ({ ...c, spec: { ...c.spec, conversion: webhook({ service: service() }, ['v2']) } }),
      (c) => (c.spec.conversion = webhook({ service: service() }, ['v3'])),
      [],
    ],
    [
      'review versions none of them understood, newly',
      (c) => c,
      (c) => (c.spec.conversion = webhook({ service: service() }, ['v3'])),
      ['spec.conversion.conversionReviewVersions: Invalid value: <object>: must include at least one of v1, v1beta1'],
    ],
    [
      'a served version without a schema where the stored CRD already had one without',
      (c) => {
        const old = structuredClone(c);
        delete v0(old).schema;
        return old;
      },
      (c) => {
        c.spec.versions.push(version('v1beta1', { served: false, schema: undefined }));
        c.spec.versions.push(version('v1alpha1', { schema: undefined }));
      },
      ['spec.versions[2].schema.openAPIV3Schema: Required value: because otherwise all fields are pruned'],
    ],
    [
      'a version without a schema where the stored CRD had them all',
      (c) => c,
      (c) => c.spec.versions.push(version('v1beta1', { served: false, schema: undefined })),
      ['spec.versions[1].schema.openAPIV3Schema: Required value: schemas are required'],
    ],
    [
      'approval still missing',
      (c) => {
        const old = structuredClone(c);
        withGroup(old, group('widgets'));
        return old;
      },
      (c) => {
        withGroup(c, group('widgets'));
        v0(c).additionalPrinterColumns = [{ name: 'A', type: 'string', jsonPath: '.spec.a' }];
      },
      [],
    ],
    [
      'approval removed',
      (c) => {
        const old = structuredClone(c);
        withGroup(old, group('widgets'));
        old.metadata.annotations = { [approval()]: 'https://github.com/example/widgets/pull/1' };
        return old;
      },
      (c) => withGroup(c, group('widgets')),
      [
        `metadata.annotations[${approval()}]: Required value: protected groups must have approval annotation "${approval()}", see https://github.com/kubernetes/enhancements/pull/1111`,
      ],
    ],
    [
      'the rules of create apply too',
      (c) => c,
      (c) => (v0(c).additionalPrinterColumns = [{ name: 'A', type: 'text', jsonPath: '.spec.a' }]),
      [
        'spec.additionalPrinterColumns[0].type: Invalid value: "text": must be one of boolean,date,integer,number,string',
      ],
    ],
    ['the name rule of create does not', (c) => c, (c) => (c.metadata.name = 'other.example.com'), []],
  ];

  it.each(cases)('%s', (...[, oldOf, mutate, want]) => {
    const old = oldOf(baseCrd());
    const c = baseCrd();
    mutate(c);
    expect(validateCrdUpdate(c, old).map(show)).toEqual(want);
  });
});

describe('the Gateway API v1.2.1 definitions', () => {
  const dir = gatewayApiCrdDir();
  const files = readdirSync(dir).filter((f) => f.endsWith('.yaml'));
  let previous = naming().scheme;

  beforeAll(() => {
    previous = naming().scheme;
    useNaming('kubernetes');
  });
  afterAll(() => {
    useNaming(previous);
  });

  it('are four', () => {
    expect(files).toHaveLength(4);
  });

  it.each(files)('%s is valid, created and updated', (file) => {
    const crd = parseYaml(readFileSync(join(dir, file), 'utf8')) as Crd;
    expect(validateCrd(crd).map(show)).toEqual([]);
    const stored: Crd = { ...crd, status: { ...crd.status, conditions: [{ type: 'Established', status: 'True' }] } };
    expect(validateCrdUpdate(crd, stored).map(show)).toEqual([]);
  });
});

function scale(): { specReplicasPath: string; statusReplicasPath: string; labelSelectorPath?: string } {
  return {
    specReplicasPath: '.spec.replicas',
    statusReplicasPath: '.status.replicas',
    labelSelectorPath: '.status.selector',
  };
}

function service(): { namespace: string; name: string; path?: string; port?: number } {
  return { namespace: 'default', name: 'converter' };
}

function webhook(
  clientConfig: NonNullable<NonNullable<Crd['spec']['conversion']>['webhook']>['clientConfig'],
  conversionReviewVersions: string[] = ['v1'],
): NonNullable<Crd['spec']['conversion']> {
  return { strategy: 'Webhook', webhook: { clientConfig, conversionReviewVersions } };
}

function approval(): string {
  return `api-approved.${naming().labelPrefix}`;
}
