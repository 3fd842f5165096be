export { parseControllerManagerOptions, controllerManagerCommand, type ControllerManagerOptions } from './options.js';
export {
  parseControllers,
  canonicalControllerName,
  KNOWN_CONTROLLERS,
  type ControllerSelection,
} from './controller-names.js';
export {
  startControllerManager,
  ControllerManagerConfigError,
  type RunningControllerManager,
} from './controller-manager.js';
export { CONTROLLERS } from './controllers/index.js';
export type { ControllerContext, ControllerDefinition, RunnableController } from './controller-context.js';
