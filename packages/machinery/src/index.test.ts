import * as machinery from './index.js';

describe('@svc/machinery entry point', () => {
  test.each([
    'parseDuration',
    'formatDuration',
    'validateDnsSubdomain',
    'validateGenerateName',
    'parseLabelSelector',
    'LabelSelector',
    'parseFieldSelector',
    'exactMetadataName',
    'applyMergePatch',
    'applyJsonPatch',
    'JsonPatchTestFailed',
    'FeatureGates',
    'API_SERVER_GATES',
    'parseRuntimeConfig',
    'isEnabled',
    'checkSchema',
    'pruneUnknownFields',
    'applyStrategicMergePatch',
    'FieldSet',
    'fieldSetOf',
    'pathString',
    'applyPatch',
    'updateManagedFields',
    'managedFieldsBase',
    'isResetManagedFields',
    'managerFromUserAgent',
    'applyConflictError',
    'compareValues',
  ])('exports %s', (name) => {
    expect(machinery).toHaveProperty(name);
  });
});
