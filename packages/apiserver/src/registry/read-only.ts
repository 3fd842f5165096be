import type { ApiObject, ResourceType } from '@svc/api';
import type { ListParams } from './store.js';

/**
 * A read-only type served from something other than storage (Kubernetes' REST storages with
 * only a Getter and a Lister, such as componentstatuses): `get` and `list` only. The
 * counterpart of `CreateOnlyHandler`.
 */
export interface ReadOnlyHandler {
  type: ResourceType;
  /** Kubernetes' deprecation warning for every answer (`v1 ComponentStatus is deprecated in v1.19+`). */
  warning?: string;
  get(name: string): Promise<ApiObject>;
  list(p: ListParams): Promise<ApiObject[]>;
}
