#!/usr/bin/env node
import { SvcconfigError } from '@svc/client';
import { componentMain } from '@svc/component-base';
import { parseControllerManagerOptions } from '../options.js';
import { startControllerManager } from '../controller-manager.js';

componentMain({
  name: 'svc-controller-manager',
  parse: (argv) => parseControllerManagerOptions(argv, { quiet: true }),
  start: (opts, logger) => startControllerManager(opts, { logger }),
  isConfigError: (e) => e instanceof SvcconfigError,
});
