#!/usr/bin/env node
// svcctl unbundled (what the tests spawn). The installed binary is the bundle scripts/bundle.mjs
// makes: dist/bundle/svcctl.cjs (component-base's code-cache-loader.ts) loading dist/bundle/svcctl.main.cjs.
import { runSvcctlProcess } from './process-main.js';

runSvcctlProcess(process.argv.slice(2));
