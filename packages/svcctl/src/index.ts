/** svcctl, the command-line client: `runSvcctl(argv, io)` runs one command line (the binary is `bin/svcctl.ts`). */
export { runSvcctl } from './main.js';
export { processIo, type SvcctlIo } from './io.js';
