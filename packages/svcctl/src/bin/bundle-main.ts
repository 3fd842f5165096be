// The entry of svcctl's main bundle (dist/bundle/svcctl.main.cjs, a CommonJS script that
// @svc/component-base's code-cache-loader.ts compiles with V8's code cache): what the loader calls.
export { runSvcctlProcess as main } from './process-main.js';
