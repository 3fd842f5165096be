/**
 * Kubernetes' process-wide capabilities (pkg/capabilities): whether pods may run privileged
 * containers (`--allow-privileged`). Set once at start, read by pod validation. Like Kubernetes
 * it is one setting per process: API servers sharing a process share it.
 */
let allowPrivileged = false;

export function setAllowPrivileged(allow: boolean): void {
  allowPrivileged = allow;
}

export function privilegedAllowed(): boolean {
  return allowPrivileged;
}
