import { s } from '../../../schema.js';

/** `authentication/v1` UserInfo, as reviews report it (field numbers of Kubernetes' generated.proto). */
export const userInfo = s.obj({
  username: s.str({ tag: 1 }),
  uid: s.str({ tag: 2 }),
  groups: s.atomic(s.str(), { tag: 3 }),
  extra: s.map(s.atomic(s.str()), { tag: 4 }),
});
