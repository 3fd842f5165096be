export * from './interface.js';
export { Etcd3Storage, type Etcd3StorageOptions } from './etcd3/etcd3-storage.js';
