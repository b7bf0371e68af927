// What the server's /health says when every engine gave up after crashing again and again
// ("failed"), read into parts a notification can say plainly: how often, which signal or exit
// code, the engine's last error line. Pure, unit-tested against the server's wording.

export interface EngineFailure {
  /** Deaths in a row before the server stopped restarting, when it says. */
  deaths: number | null;
  signal: string | null;
  exitCode: number | null;
  /** The engine's last error line (or the reason the server ended it). */
  lastError: string | null;
}

/**
 * "engine (replica 0) stopped restarting after 5 engine deaths in a row; last: engine process
 * exited (signal SIGSEGV): last error log: [engine 0.5] GGML_ASSERT(...) failed (replica 0,
 * epoch 5, pid 123)" -> { deaths: 5, signal: 'SIGSEGV', lastError: 'GGML_ASSERT(...) failed' }.
 */
export function parseEngineFailure(reason: string): EngineFailure {
  const deaths = /after (\d+) engine deaths/.exec(reason)?.[1];
  const signal = /\(signal (SIG[A-Z0-9]+)\)/.exec(reason)?.[1] ?? null;
  const code = /exited \(code (\d+)\)/.exec(reason)?.[1];
  let lastError: string | null = null;
  const detail = /exited \((?:signal [A-Z0-9]+|code [\d?]+)\): (.*?)(?: \(replica \d+, epoch \d+, pid [\d?]+\))?(?:;|$)/.exec(reason)?.[1];
  if (detail) lastError = detail.replace(/^last error log: /, '').replace(/^\[engine [\d.]+\]\s*/, '').trim() || null;
  return { deaths: deaths ? Number(deaths) : null, signal, exitCode: code ? Number(code) : null, lastError };
}

/** One sentence: what happened, to which model on which device, and the last error line. */
export function engineFailureMessage(f: EngineFailure, model: string | null, devices: readonly string[]): string {
  const how = f.signal ? ` (signal ${f.signal})` : f.exitCode !== null ? ` (exit code ${f.exitCode})` : '';
  const times = f.deaths ? ` after ${f.deaths} crashes in a row` : '';
  const where = [model ? `running ${model}` : null, devices.length ? `on ${devices.join(', ')}` : null].filter(Boolean).join(' ');
  const last = f.lastError ? ` Last engine error: ${f.lastError}` : ' The engine wrote no error line; see the log.';
  return `Strata: the engine stopped${times}${how}${where ? ` ${where}` : ''}.${last}`;
}
