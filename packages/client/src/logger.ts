/** What the client's long-running loops log through; structurally a subset of the apiserver's `Logger`. */
export interface ClientLogger {
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

export const silentClientLogger: ClientLogger = { info() {}, warn() {}, error() {} };

export { sleep } from '@svc/machinery/sleep';
