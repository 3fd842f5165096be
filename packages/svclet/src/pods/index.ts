export { PodManager, type PodManagerOptions, type ContainerLogFiles } from './pod-manager.js';
export { startPodSide } from './pod-side.js';
export type { CriClient, CriRuntimeService, CriImageService } from './cri.js';
export type { Pod, PodStatus, ContainerStatus, PodCondition } from './types.js';
