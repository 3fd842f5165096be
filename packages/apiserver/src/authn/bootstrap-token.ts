import { timingSafeEqual } from 'node:crypto';
import { bootstrapTokenSecretType, naming } from '@svc/api';
import type { AudienceAgnosticTokenAuthenticator, UserInfo } from '@svc/component-base';
import {
  BOOTSTRAP_TOKEN,
  BOOTSTRAP_TOKEN_SECRET_PREFIX,
  bootstrapTokenExpired,
  secretDataString as dataString,
} from '@svc/machinery';
import type { ObjectGetter } from './object-getter.js';

export const BOOTSTRAP_USER_PREFIX = 'system:bootstrap:';
export const BOOTSTRAPPERS_GROUP = 'system:bootstrappers';
/** Extra groups must stay under `system:bootstrappers:` (Kubernetes' pattern). */
const EXTRA_GROUP = /^system:bootstrappers:[a-z0-9:-]{0,255}[a-z0-9]$/;

function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  // Constant time for equal lengths; a length difference is not a secret (the format fixes it).
  return x.length === y.length && timingSafeEqual(x, y);
}

/**
 * `--enable-bootstrap-token-auth`: `<id>.<secret>` tokens kept in Secrets
 * `bootstrap-token-<id>` of the bootstrap type in the system namespace. Tokens of another
 * shape are not this authenticator's (no opinion); a token of this shape whose Secret is
 * missing, of the wrong type, deleted, expired, not for authentication, with another secret
 * or with an extra group outside `system:bootstrappers:` fails.
 */
export class BootstrapTokenAuthenticator implements AudienceAgnosticTokenAuthenticator {
  constructor(
    private readonly getObject: ObjectGetter,
    private readonly now: () => number = Date.now,
  ) {}

  async authenticateToken(token: string): Promise<UserInfo | null> {
    const m = BOOTSTRAP_TOKEN.exec(token);
    if (!m) return null;
    const [, id = '', secretPart = ''] = m;
    const name = `${BOOTSTRAP_TOKEN_SECRET_PREFIX}${id}`;
    const secret = await this.getObject({ resource: 'secrets', namespace: naming().systemNamespace, name });
    const fail = (why: string): never => {
      throw new Error(`bootstrap token ${id}: ${why}`);
    };
    if (!secret) return fail(`secret ${naming().systemNamespace}/${name} not found`);
    if (secret.metadata.deletionTimestamp) fail('the secret is being deleted');
    if (secret.type !== bootstrapTokenSecretType())
      fail(`the secret has type ${JSON.stringify(secret.type ?? '')}, not ${bootstrapTokenSecretType()}`);
    if (!sameSecret(dataString(secret, 'token-secret') ?? '', secretPart)) fail('the token secret does not match');
    if (dataString(secret, 'token-id') !== id) fail("the secret's token-id does not match");
    if (bootstrapTokenExpired(secret, this.now())) fail('the token has expired');
    if (dataString(secret, 'usage-bootstrap-authentication') !== 'true') fail('the token is not for authentication');
    const groups = [BOOTSTRAPPERS_GROUP];
    for (const g of (dataString(secret, 'auth-extra-groups') ?? '')
      .split(',')
      .map((x) => x.trim())
      .filter((x) => x !== '')) {
      if (!EXTRA_GROUP.test(g)) fail(`extra group ${JSON.stringify(g)} does not start with ${BOOTSTRAPPERS_GROUP}:`);
      if (!groups.includes(g)) groups.push(g);
    }
    return { name: `${BOOTSTRAP_USER_PREFIX}${id}`, groups };
  }
}
