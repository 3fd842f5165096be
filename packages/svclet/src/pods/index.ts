export { PodManager, type PodManagerOptions, type ContainerLogFiles } from './pod-manager.js';
export { startPodSide } from './pod-side.js';
export type { CriClient, CriRuntimeService, CriImageService } from './cri.js';
