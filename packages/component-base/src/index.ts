export * from './user.js';
export * from './authenticator.js';
export { parseCertificateBundle, verifyClientChain, ClientCertAuthenticator } from './x509.js';
export { generateServingCert, ensureServingCert, type ServingCert } from './self-signed.js';
export * from './health/checks.js';
export { healthHandler } from './health/handler.js';
export * from './flags.js';
