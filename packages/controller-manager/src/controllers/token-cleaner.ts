import { bootstrapTokenSecretType, isNotFound, naming, type Secret } from '@svc/api';
import { ResourceClient, splitKey } from '@svc/client';
import { bootstrapTokenExpiry } from '@svc/machinery';
import { informer, newController, type ControllerDefinition } from '../controller-context.js';
import { R } from '../resources.js';

/**
 * `token-cleaner-controller` (`tokencleaner`): deletes bootstrap-token Secrets in the system
 * namespace once their `expiration` has passed; a token not yet expired is looked at again
 * when it expires.
 */
export const tokenCleaner: ControllerDefinition = {
  name: 'token-cleaner-controller',
  build(ctx) {
    const ns = naming().systemNamespace;
    const secrets = informer<Secret>(ctx, R.secrets(), ns);
    const api = new ResourceClient<Secret>(ctx.client, R.secrets()).namespace(ns);
    const controller = newController(ctx, {
      name: 'token-cleaner-controller',
      queueName: 'token_cleaner',
      reconcile: async (key) => {
        const secret = secrets.store.get(key);
        if (!secret || secret.type !== bootstrapTokenSecretType() || secret.metadata.deletionTimestamp) return;
        const expiry = bootstrapTokenExpiry(secret);
        if (expiry === undefined) return;
        const left = expiry - Date.now();
        if (left > 0) return { requeueAfter: left };
        ctx.logger.info('deleting expired bootstrap token', { controller: 'token-cleaner-controller', secret: key });
        try {
          await api.delete(splitKey(key).name, { preconditions: { uid: secret.metadata.uid } });
        } catch (e) {
          if (!isNotFound(e)) throw e;
        }
        return undefined;
      },
    });
    controller.watch(secrets);
    return controller;
  },
};
