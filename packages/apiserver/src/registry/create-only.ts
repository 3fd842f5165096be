import type { ApiObject, ObjectSchema, ResourceType } from '@svc/api';
import type { AuthenticationNotes, UserInfo } from '@svc/component-base';

/** One create of a create-only endpoint, decoded and checked against the handler's kind. */
export interface CreateOnlyRequest {
  namespace: string;
  /** The parent's name for a subresource (`serviceaccounts/<name>/token`); empty otherwise. */
  name: string;
  /** The body with `apiVersion` (as the client spelled it, or the URL's) and `kind` set. */
  body: ApiObject;
  user: UserInfo;
  dryRun: boolean;
  /**
   * What the request's context collects (Kubernetes' warning.AddWarning and audit annotations
   * on the request's context): a TokenReview's authenticators note here what a request with
   * that token would have been told.
   */
  notes: AuthenticationNotes;
}

/**
 * A create-only endpoint that is not a stored type's create: a virtual type (reviews) or a
 * subresource of another kind (`serviceaccounts/token` → TokenRequest, `pods/binding`).
 * Nothing is stored by the generic store; the handler answers from the request.
 */
export interface CreateOnlyHandler {
  /** The kind read and answered; its schema types the body (and decodes Protobuf bodies). */
  kind: { group: string; version: string; kind: string; schema: ObjectSchema };
  /** Other versions of the kind's group a body may name (an Eviction in `policy/v1beta1`). */
  alsoVersions?: readonly string[];
  create(req: CreateOnlyRequest): Promise<object>;
}

/** Key of an endpoint of its own (create-only or connect): `<group>/<version>/<plural>[/<subresource>]`. */
export function endpointKey(r: Pick<ResourceType, 'group' | 'version' | 'plural'>, subresource = ''): string {
  return `${r.group}/${r.version}/${r.plural}${subresource ? `/${subresource}` : ''}`;
}
