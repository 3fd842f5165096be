import { objectSchema } from '../../../meta-schema.js';
import { s, type ObjectSchema } from '../../../schema.js';
import { group } from '../../../names.js';

/** The kind a subresource reads and answers with when it is not its parent's kind. */
export interface SubresourceKind {
  group: string;
  version: string;
  kind: string;
  schema: ObjectSchema;
}

/** TokenRequest (`authentication/v1`): the body of `serviceaccounts/<name>/token`. */
export const tokenRequest = (): SubresourceKind => ({
  group: group('authentication'),
  version: 'v1',
  kind: 'TokenRequest',
  schema: objectSchema({
    spec: s.obj(
      {
        audiences: s.atomic(s.str(), { tag: 1 }),
        boundObjectRef: s.obj(
          {
            kind: s.str({ tag: 1 }),
            apiVersion: s.str({ tag: 2 }),
            name: s.str({ tag: 3 }),
            uid: s.str({ tag: 4 }),
          },
          { tag: 3 },
        ),
        expirationSeconds: s.int64({ tag: 4 }),
      },
      { tag: 2 },
    ),
    status: s.obj({ token: s.str({ tag: 1 }), expirationTimestamp: s.time({ tag: 2 }) }, { tag: 3 }),
  }),
});
