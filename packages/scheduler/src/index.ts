export { parseSchedulerOptions, schedulerCommand, DEFAULT_SCHEDULER_NAME, type SchedulerOptions } from './options.js';
export { startScheduler, type RunningScheduler, type SchedulerTuning } from './run-scheduler.js';
