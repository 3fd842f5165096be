// The entry of svc-apiserver's main bundle (dist/bundle/svc-apiserver.main.cjs, a CommonJS
// script that @svc/component-base's code-cache-loader.ts compiles with V8's code cache): what
// the loader calls.
export { runApiServerProcess as main } from './process-main.js';
