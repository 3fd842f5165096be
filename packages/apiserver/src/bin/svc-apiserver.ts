#!/usr/bin/env node
// svc-apiserver unbundled. The installed binary is the bundle scripts/bundle.mjs makes:
// dist/bundle/svc-apiserver.cjs (component-base's code-cache-loader.ts) loading
// dist/bundle/svc-apiserver.main.cjs; its loader sets the heap flag before compiling the bundle.
import { limitHeapGrowth } from './heap-growing.js';
import { runApiServerProcess } from './process-main.js';

limitHeapGrowth();
runApiServerProcess(process.argv.slice(2));
