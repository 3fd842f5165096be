import type { ControllerDefinition } from '../controller-context.js';
import { bootstrapSigner } from './bootstrap-signer.js';
import { namespaceController } from './namespace.js';
import { rootCaCertPublisher } from './root-ca-cert-publisher.js';
import { serviceAccountController } from './service-account.js';
import { tokenCleaner } from './token-cleaner.js';

/** Every controller this manager can run; `--controllers` picks among them. */
export const CONTROLLERS: readonly ControllerDefinition[] = [
  namespaceController,
  serviceAccountController,
  rootCaCertPublisher,
  tokenCleaner,
  bootstrapSigner,
];
