import {
  fieldErrors,
  type ApiObject,
  type FieldError,
  type FlowSchema,
  type FlowSchemaSubject,
  type NonResourcePolicyRule,
  type PolicyRulesWithSubjects,
  type PriorityLevelConfiguration,
  type QueuingConfiguration,
  type ResourcePolicyRule,
} from '@svc/api';
import { isDns1123Label, isDns1123Subdomain } from '@svc/machinery';
import type { Strategy } from '../strategy.js';
import { CATCH_ALL, EXEMPT, mandatoryFlowSchemas, mandatoryPriorityLevels } from '../../flowcontrol/bootstrap.js';

/**
 * flowcontrol.apiserver.<suffix>/v1 FlowSchema and PriorityLevelConfiguration: Kubernetes
 * 1.32's defaults (`matchingPrecedence` 1000; a limited level's `nominalConcurrencyShares` 30
 * only when unspecified, an explicit 0 stays 0; `lendablePercent` 0; queues 64, hand size 8,
 * queue length 50) and validation (pkg/apis/flowcontrol/validation: its paths and messages).
 */

const MAX_MATCHING_PRECEDENCE = 10000;
const MAX_QUEUES = 10_000_000;
const MAX_HASH_BITS = 60;
const VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'proxy', 'update', 'watch'];
const NS_INTRO = "each member of this list must be '*' or a DNS-1123 label; ";

function hasWildcard(list: readonly string[]): boolean {
  return list.includes('*');
}

function validateVerbs(verbs: string[] | undefined, path: string): FieldError[] {
  if (!verbs || verbs.length === 0)
    return [fieldErrors.required(`${path}.verbs`, 'verbs must contain at least one value')];
  if (hasWildcard(verbs)) {
    return verbs.length > 1
      ? [fieldErrors.invalid(`${path}.verbs`, verbs, "if '*' is present, must not specify other verbs")]
      : [];
  }
  if (verbs.some((v) => !VERBS.includes(v))) return [fieldErrors.notSupported(`${path}.verbs`, verbs, VERBS)];
  return [];
}

function validateResourceRule(rule: ResourcePolicyRule, path: string): FieldError[] {
  const errs = validateVerbs(rule.verbs, path);
  const groups = rule.apiGroups ?? [];
  if (groups.length === 0)
    errs.push(fieldErrors.required(`${path}.apiGroups`, 'resource rules must supply at least one api group'));
  else if (groups.length > 1 && hasWildcard(groups))
    errs.push(fieldErrors.invalid(`${path}.apiGroups`, groups, "if '*' is present, must not specify other api groups"));
  const resources = rule.resources ?? [];
  if (resources.length === 0)
    errs.push(fieldErrors.required(`${path}.resources`, 'resource rules must supply at least one resource'));
  else if (resources.length > 1 && hasWildcard(resources))
    errs.push(
      fieldErrors.invalid(`${path}.resources`, resources, "if '*' is present, must not specify other resources"),
    );
  const namespaces = rule.namespaces ?? [];
  if (namespaces.length === 0 && rule.clusterScope !== true) {
    errs.push(
      fieldErrors.required(
        `${path}.namespaces`,
        'resource rules that are not cluster scoped must supply at least one namespace',
      ),
    );
  } else if (hasWildcard(namespaces)) {
    if (namespaces.length > 1)
      errs.push(
        fieldErrors.invalid(`${path}.namespaces`, namespaces, "if '*' is present, must not specify other namespaces"),
      );
  } else {
    namespaces.forEach((ns, i) => {
      for (const msg of isDns1123Label(ns))
        errs.push(fieldErrors.invalid(`${path}.namespaces[${i}]`, ns, NS_INTRO + msg));
    });
  }
  return errs;
}

function nonResourceUrlError(url: string, path: string): FieldError | undefined {
  if (url === '') return fieldErrors.invalid(path, url, 'must not be empty');
  if (url === '/') return undefined;
  if (!url.startsWith('/')) return fieldErrors.invalid(path, url, 'must start with slash');
  if (url.includes(' ')) return fieldErrors.invalid(path, url, 'must not contain white-space');
  if (url.includes('//')) return fieldErrors.invalid(path, url, 'must not contain double slash');
  const stars = url.split('*').length - 1;
  if (stars > 1 || (stars === 1 && !url.endsWith('/*')))
    return fieldErrors.invalid(path, url, 'wildcard can only do suffix matching');
  return undefined;
}

function validateNonResourceRule(rule: NonResourcePolicyRule, path: string): FieldError[] {
  const errs = validateVerbs(rule.verbs, path);
  const urls = rule.nonResourceURLs ?? [];
  if (urls.length === 0) {
    errs.push(fieldErrors.required(`${path}.nonResourceURLs`, 'nonResourceURLs must contain at least one value'));
  } else if (hasWildcard(urls)) {
    if (urls.length > 1)
      errs.push(
        fieldErrors.invalid(
          `${path}.nonResourceURLs`,
          urls,
          "if '*' is present, must not specify other non-resource URLs",
        ),
      );
  } else {
    urls.forEach((u, i) => {
      const e = nonResourceUrlError(u, `${path}.nonResourceURLs[${i}]`);
      if (e) errs.push(e);
    });
  }
  return errs;
}

const SUBJECT_KINDS = ['Group', 'ServiceAccount', 'User'];
const OTHER_FIELDS: Record<string, Array<'user' | 'group' | 'serviceAccount'>> = {
  ServiceAccount: ['user', 'group'],
  User: ['serviceAccount', 'group'],
  Group: ['serviceAccount', 'user'],
};
const FORBIDDEN_WHEN: Record<'user' | 'group' | 'serviceAccount', string> = {
  user: "user is forbidden when subject kind is not 'User'",
  group: "group is forbidden when subject kind is not 'Group'",
  serviceAccount: "serviceAccount is forbidden when subject kind is not 'ServiceAccount'",
};

function validateSubject(subject: FlowSchemaSubject, path: string): FieldError[] {
  const others = OTHER_FIELDS[subject.kind];
  if (!others) return [fieldErrors.notSupported(`${path}.kind`, subject.kind ?? '', SUBJECT_KINDS)];
  const errs: FieldError[] = [];
  if (subject.kind === 'ServiceAccount') {
    const sa = subject.serviceAccount;
    if (!sa) {
      errs.push(
        fieldErrors.required(
          `${path}.serviceAccount`,
          "serviceAccount is required when subject kind is 'ServiceAccount'",
        ),
      );
    } else {
      if (!sa.name) errs.push(fieldErrors.required(`${path}.serviceAccount.name`, ''));
      else if (sa.name !== '*')
        for (const msg of isDns1123Subdomain(sa.name))
          errs.push(fieldErrors.invalid(`${path}.serviceAccount.name`, sa.name, msg));
      if (!sa.namespace)
        errs.push(
          fieldErrors.required(`${path}.serviceAccount.namespace`, 'must specify namespace for service account'),
        );
      else
        for (const msg of isDns1123Label(sa.namespace))
          errs.push(fieldErrors.invalid(`${path}.serviceAccount.namespace`, sa.namespace, msg));
    }
  } else {
    const field = subject.kind === 'User' ? 'user' : 'group';
    const named = subject[field];
    if (!named)
      errs.push(
        fieldErrors.required(`${path}.${field}`, `${field} is required when subject kind is '${subject.kind}'`),
      );
    else if (!named.name) errs.push(fieldErrors.required(`${path}.${field}.name`, ''));
  }
  for (const f of others)
    if (subject[f] !== undefined) errs.push(fieldErrors.forbidden(`${path}.${f}`, FORBIDDEN_WHEN[f]));
  return errs;
}

function validateRule(rule: PolicyRulesWithSubjects, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const subjects = rule.subjects ?? [];
  if (subjects.length === 0)
    errs.push(fieldErrors.required(`${path}.subjects`, 'subjects must contain at least one value'));
  subjects.forEach((s, i) => errs.push(...validateSubject(s, `${path}.subjects[${i}]`)));
  const resourceRules = rule.resourceRules ?? [];
  const nonResourceRules = rule.nonResourceRules ?? [];
  if (resourceRules.length === 0 && nonResourceRules.length === 0)
    errs.push(fieldErrors.required(path, 'at least one of resourceRules and nonResourceRules has to be non-empty'));
  resourceRules.forEach((r, i) => errs.push(...validateResourceRule(r, `${path}.resourceRules[${i}]`)));
  nonResourceRules.forEach((r, i) => errs.push(...validateNonResourceRule(r, `${path}.nonResourceRules[${i}]`)));
  return errs;
}

function validateConditions(conditions: Array<{ type?: string }> | undefined): FieldError[] {
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  (conditions ?? []).forEach((c, i) => {
    const type = c.type ?? '';
    if (seen.has(type)) errs.push(fieldErrors.duplicate(`status.conditions[${i}].type`, type));
    seen.add(type);
    if (type === '') errs.push(fieldErrors.required(`status.conditions[${i}].type`, 'must not be empty'));
  });
  return errs;
}

/** Deep equality of JSON values, key order ignored. */
function same(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a).filter((k) => (a as Record<string, unknown>)[k] !== undefined);
  const kb = Object.keys(b).filter((k) => (b as Record<string, unknown>)[k] !== undefined);
  if (ka.length !== kb.length) return false;
  return ka.every((k) => same((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}

function validateFlowSchema(obj: ApiObject): FieldError[] {
  const fs = obj as FlowSchema;
  const spec = fs.spec ?? { priorityLevelConfiguration: { name: '' } };
  const name = fs.metadata.name ?? '';
  const errs: FieldError[] = [];
  const precedence = spec.matchingPrecedence ?? 0;
  if (precedence <= 0)
    errs.push(fieldErrors.invalid('spec.matchingPrecedence', precedence, 'must be a positive value'));
  if (precedence > MAX_MATCHING_PRECEDENCE)
    errs.push(
      fieldErrors.invalid('spec.matchingPrecedence', precedence, `must not be greater than ${MAX_MATCHING_PRECEDENCE}`),
    );
  if (precedence === 1 && name !== EXEMPT)
    errs.push(
      fieldErrors.invalid(
        'spec.matchingPrecedence',
        precedence,
        "only the schema named 'exempt' may have matchingPrecedence 1",
      ),
    );
  const dm = spec.distinguisherMethod;
  if (dm && dm.type !== 'ByUser' && dm.type !== 'ByNamespace')
    errs.push(fieldErrors.notSupported('spec.distinguisherMethod.type', dm, ['ByNamespace', 'ByUser']));
  const plName = spec.priorityLevelConfiguration?.name ?? '';
  if (plName === '')
    errs.push(fieldErrors.required('spec.priorityLevelConfiguration.name', 'must reference a priority level'));
  else
    for (const msg of isDns1123Subdomain(plName))
      errs.push(fieldErrors.invalid('spec.priorityLevelConfiguration.name', plName, msg));
  (spec.rules ?? []).forEach((r, i) => errs.push(...validateRule(r, `spec.rules[${i}]`)));
  const mandatory = mandatoryFlowSchemas().find((m) => m.metadata.name === name);
  if (mandatory && !same(spec, mandatory.spec))
    errs.push(fieldErrors.invalid('spec', spec, `spec of '${name}' must equal the fixed value`));
  errs.push(...validateConditions(fs.status?.conditions));
  return errs;
}

function validateQueuing(q: QueuingConfiguration, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const { queues = 0, handSize = 0, queueLengthLimit = 0 } = q;
  if (queueLengthLimit <= 0)
    errs.push(fieldErrors.invalid(`${path}.queueLengthLimit`, queueLengthLimit, 'must be positive'));
  if (queues <= 0) errs.push(fieldErrors.invalid(`${path}.queues`, queues, 'must be positive'));
  else if (queues > MAX_QUEUES)
    errs.push(fieldErrors.invalid(`${path}.queues`, queues, `must not be greater than ${MAX_QUEUES}`));
  if (handSize <= 0) errs.push(fieldErrors.invalid(`${path}.handSize`, handSize, 'must be positive'));
  else if (handSize > queues)
    errs.push(fieldErrors.invalid(`${path}.handSize`, handSize, `should not be greater than queues (${queues})`));
  else if (Math.ceil(Math.log2(queues) * handSize) > MAX_HASH_BITS)
    errs.push(
      fieldErrors.invalid(
        `${path}.handSize`,
        handSize,
        `required entropy bits of deckSize ${queues} and handSize ${handSize} should not be greater than ${MAX_HASH_BITS}`,
      ),
    );
  return errs;
}

function validatePercent(value: number | undefined, path: string): FieldError[] {
  if (value === undefined || (value >= 0 && value <= 100)) return [];
  return [fieldErrors.invalid(path, value, 'must be between 0 and 100, inclusive')];
}

function validateLevelSpec(pl: PriorityLevelConfiguration): FieldError[] {
  const spec = pl.spec ?? { type: '' };
  const name = pl.metadata.name ?? '';
  const errs: FieldError[] = [];
  if ((name === EXEMPT) !== (spec.type === 'Exempt'))
    errs.push(
      fieldErrors.invalid('spec.type', spec.type ?? '', "type must be 'Exempt' if and only if name is 'exempt'"),
    );
  if (spec.type === 'Exempt') {
    if (spec.limited) errs.push(fieldErrors.forbidden('spec.limited', 'must be nil if the type is not Limited'));
    const ex = spec.exempt;
    if (ex?.nominalConcurrencyShares !== undefined && ex.nominalConcurrencyShares < 0)
      errs.push(
        fieldErrors.invalid(
          'spec.exempt.nominalConcurrencyShares',
          ex.nominalConcurrencyShares,
          'must be a non-negative integer',
        ),
      );
    errs.push(...validatePercent(ex?.lendablePercent, 'spec.exempt.lendablePercent'));
  } else if (spec.type === 'Limited') {
    if (spec.exempt) errs.push(fieldErrors.forbidden('spec.exempt', 'must be nil if the type is Limited'));
    const l = spec.limited;
    if (!l) {
      errs.push(fieldErrors.required('spec.limited', 'must not be empty when type is Limited'));
    } else {
      const shares = l.nominalConcurrencyShares ?? 0;
      if (shares < 0)
        errs.push(
          fieldErrors.invalid('spec.limited.nominalConcurrencyShares', shares, 'must be a non-negative integer'),
        );
      const lr = l.limitResponse ?? { type: '' };
      if (lr.type === 'Reject') {
        if (lr.queuing)
          errs.push(
            fieldErrors.forbidden(
              'spec.limited.limitResponse.queuing',
              'must be nil if limited.limitResponse.type is not Limited',
            ),
          );
      } else if (lr.type === 'Queue') {
        if (!lr.queuing)
          errs.push(
            fieldErrors.required(
              'spec.limited.limitResponse.queuing',
              'must not be empty if limited.limitResponse.type is Limited',
            ),
          );
        else errs.push(...validateQueuing(lr.queuing, 'spec.limited.limitResponse.queuing'));
      } else {
        errs.push(fieldErrors.notSupported('spec.limited.limitResponse.type', lr.type ?? '', ['Queue', 'Reject']));
      }
      errs.push(...validatePercent(l.lendablePercent, 'spec.limited.lendablePercent'));
      if (l.borrowingLimitPercent !== undefined && l.borrowingLimitPercent < 0)
        errs.push(
          fieldErrors.invalid(
            'spec.limited.borrowingLimitPercent',
            l.borrowingLimitPercent,
            'if specified, must be a non-negative integer',
          ),
        );
    }
  } else {
    errs.push(fieldErrors.notSupported('spec.type', spec.type ?? '', ['Exempt', 'Limited']));
  }
  return errs;
}

function validateLevel(obj: ApiObject): FieldError[] {
  const pl = obj as PriorityLevelConfiguration;
  const errs = validateLevelSpec(pl);
  const name = pl.metadata.name ?? '';
  const mandatory = mandatoryPriorityLevels().find((m) => m.metadata.name === name);
  if (mandatory && name === EXEMPT) {
    // The admin may tune the exempt level's `exempt` block; the rest is fixed.
    if (!same({ ...pl.spec, exempt: undefined }, { ...mandatory.spec, exempt: undefined }))
      errs.push(
        fieldErrors.invalid(
          'spec',
          pl.spec,
          `spec of '${name}' except the 'spec.exempt' field must equal the fixed value`,
        ),
      );
  } else if (mandatory && name === CATCH_ALL && !same(pl.spec, mandatory.spec)) {
    errs.push(fieldErrors.invalid('spec', pl.spec, `spec of '${name}' must equal the fixed value`));
  }
  errs.push(...validateConditions(pl.status?.conditions));
  return errs;
}

function defaultFlowSchema(obj: ApiObject): void {
  const fs = obj as FlowSchema;
  if (!fs.spec) return;
  if (!fs.spec.matchingPrecedence) fs.spec.matchingPrecedence = 1000;
  for (const rule of fs.spec.rules ?? []) for (const r of rule.resourceRules ?? []) r.clusterScope ??= false;
}

function defaultLevel(obj: ApiObject): void {
  const spec = (obj as PriorityLevelConfiguration).spec;
  if (!spec) return;
  if (spec.type === 'Exempt') spec.exempt ??= {};
  if (spec.exempt) {
    spec.exempt.nominalConcurrencyShares ??= 0;
    spec.exempt.lendablePercent ??= 0;
  }
  const l = spec.limited;
  if (!l) return;
  l.nominalConcurrencyShares ??= 30; // v1: only when unspecified; an explicit 0 stays 0
  l.lendablePercent ??= 0;
  const q = l.limitResponse?.queuing;
  if (q) {
    if (!q.queues) q.queues = 64;
    if (!q.handSize) q.handSize = 8;
    if (!q.queueLengthLimit) q.queueLengthLimit = 50;
  }
}

export const flowSchemaStrategy: Strategy = {
  prepareForCreate: defaultFlowSchema,
  prepareForUpdate: defaultFlowSchema,
  validate: validateFlowSchema,
  validateUpdate: validateFlowSchema,
};

export const priorityLevelConfigurationStrategy: Strategy = {
  prepareForCreate: defaultLevel,
  prepareForUpdate: defaultLevel,
  validate: validateLevel,
  validateUpdate: validateLevel,
};
