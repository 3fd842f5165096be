// The entry of svcctl's main bundle (dist/bundle/svcctl.main.cjs, a CommonJS script that
// code-cache-loader.ts compiles with V8's code cache): what the loader calls.
export { runSvcctlProcess } from './process-main.js';
