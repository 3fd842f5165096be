#!/usr/bin/env node
import { SvcconfigError } from '@svc/client';
import { componentMain } from '@svc/component-base';
import { parseSchedulerOptions } from '../options.js';
import { startScheduler } from '../run-scheduler.js';

componentMain({
  name: 'svc-scheduler',
  parse: (argv) => parseSchedulerOptions(argv, { quiet: true }),
  start: (opts, logger) => startScheduler(opts, { logger }),
  isConfigError: (e) => e instanceof SvcconfigError,
});
