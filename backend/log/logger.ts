// Structured logging for the server: text or JSON lines through a QueuedWriter, so that
// logging can never block serving. Fields such as the request id and slot travel with
// each line (child loggers add them).
import { QueuedWriter } from './queued-writer.js';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
export type LogFormat = 'text' | 'json';
export type LogFields = Record<string, string | number | boolean | null | undefined>;

const levelRank: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export interface Logger {
  debug(msg: string, fields?: LogFields): void;
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
  /** A logger that adds these fields to every line. */
  child(fields: LogFields): Logger;
  /** Lines dropped because the output could not keep up. */
  readonly dropped: number;
  flush(timeoutMs?: number): Promise<void>;
}

export interface LoggerOptions {
  format?: LogFormat;
  level?: LogLevel;
  writer?: Pick<QueuedWriter, 'writeLine' | 'flush' | 'dropped'>;
  now?: () => Date;
}

export function formatLine(format: LogFormat, time: Date, level: LogLevel, msg: string, fields: LogFields): string {
  if (format === 'json') {
    const obj: Record<string, unknown> = { time: time.toISOString(), level, msg };
    for (const [k, v] of Object.entries(fields)) if (v !== undefined) obj[k] = v;
    return JSON.stringify(obj);
  }
  let line = `${time.toISOString()} ${level.padEnd(5)} ${msg}`;
  const extra = Object.entries(fields).filter(([, v]) => v !== undefined);
  if (extra.length > 0) line += ` ${extra.map(([k, v]) => `${k}=${quoteValue(v)}`).join(' ')}`;
  // One record per line: a message with newlines (an engine's stack trace) stays one record.
  return line.replace(/\r?\n/g, '\\n');
}

function quoteValue(v: unknown): string {
  const s = String(v);
  return /[\s"=]/.test(s) ? JSON.stringify(s) : s;
}

export function createLogger(opts: LoggerOptions = {}): Logger {
  const format = opts.format ?? 'text';
  const min = levelRank[opts.level ?? 'info'];
  const writer = opts.writer ?? new QueuedWriter({ fd: 1 });
  const now = opts.now ?? (() => new Date());

  function make(base: LogFields): Logger {
    const log = (level: LogLevel, msg: string, fields?: LogFields): void => {
      if (levelRank[level] < min) return;
      writer.writeLine(formatLine(format, now(), level, msg, fields ? { ...base, ...fields } : base));
    };
    return {
      debug: (m, f) => log('debug', m, f),
      info: (m, f) => log('info', m, f),
      warn: (m, f) => log('warn', m, f),
      error: (m, f) => log('error', m, f),
      child: (fields) => make({ ...base, ...fields }),
      get dropped() { return writer.dropped; },
      flush: (t) => writer.flush(t),
    };
  }
  return make({});
}

/** A logger that discards everything (tests, library use). */
export const silentLogger: Logger = {
  debug() {}, info() {}, warn() {}, error() {},
  child() { return silentLogger; },
  dropped: 0,
  flush: () => Promise.resolve(),
};
