/** Structured logger: one per component, with context; `text` (key=value) or `json` lines on stderr. */
export type LogFormat = 'text' | 'json';

export interface Logger {
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  /** Logged only when the verbosity is at least `level`. */
  v(level: number): Pick<Logger, 'info'>;
  with(fields: Record<string, unknown>): Logger;
}

export interface LoggerOptions {
  format?: LogFormat;
  verbosity?: number;
  write?: (line: string) => void;
}

function textValue(v: unknown): string {
  const s = typeof v === 'string' ? v : JSON.stringify(v);
  return /[\s"=]/.test(s) ? JSON.stringify(s) : s;
}

export function createLogger(opts: LoggerOptions = {}, context: Record<string, unknown> = {}): Logger {
  const format = opts.format ?? 'text';
  const verbosity = opts.verbosity ?? 0;
  const write = opts.write ?? ((line: string) => process.stderr.write(line + '\n'));
  const emit = (level: string, msg: string, fields: Record<string, unknown> = {}): void => {
    const all = { ...context, ...fields };
    if (format === 'json') {
      write(JSON.stringify({ ts: Date.now() / 1000, level, msg, ...all }));
    } else {
      const kv = Object.entries(all)
        .map(([k, v]) => `${k}=${textValue(v)}`)
        .join(' ');
      write(`${new Date().toISOString()} ${level.toUpperCase()} ${JSON.stringify(msg)}${kv ? ' ' + kv : ''}`);
    }
  };
  const quiet = { info: (): void => undefined };
  return {
    info: (m, f) => emit('info', m, f),
    warn: (m, f) => emit('warn', m, f),
    error: (m, f) => emit('error', m, f),
    v: (level) =>
      verbosity >= level ? { info: (m: string, f?: Record<string, unknown>) => emit('info', m, f) } : quiet,
    with: (fields) => createLogger(opts, { ...context, ...fields }),
  };
}

/** A logger that drops everything (tests). */
export const silentLogger: Logger = createLogger({ write: () => undefined });
