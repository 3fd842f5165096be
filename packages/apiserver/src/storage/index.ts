export * from './interface.js';
export { Etcd3Storage, type Etcd3StorageOptions } from './etcd3/etcd3-storage.js';
export { CachedStorage, type CachedStorageOptions } from './cacher/cached-storage.js';
export { runCompactor, COMPACT_REVISION_KEY } from './compactor.js';
