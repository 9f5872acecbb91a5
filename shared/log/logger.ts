/**
 * The one logger interface of opflow: the engine, the Open Platform client, the callback sender and
 * the runtimes log through it. Fields are structured (keys of the JSON line on Lambda and in the
 * local `opflow.log`). Whoever logs redacts secrets first; a logger never sees a key.
 */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

export interface Logger {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

/** Logs nothing (benchmarks, tests). */
export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };
