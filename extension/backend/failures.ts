// Why the server process ended, told from its exit and last log lines, and what the user can do.

export type FailureKind = 'portInUse' | 'modelMissing' | 'badSettings' | 'outOfMemory' | 'healthTimeout' | 'crashed';

export interface Failure {
  kind: FailureKind;
  /** One sentence for the user, with the cause. */
  message: string;
  /** Whether starting again as is can help (a crash may; a missing file will not). */
  retry: boolean;
}

/** The last line that looks like an error, for quoting. */
function lastErrorLine(lines: readonly string[]): string | null {
  for (let i = lines.length - 1; i >= 0; i--) {
    const l = lines[i]!.trim();
    if (/error|fail|abort|cannot|unable|invalid|must|exception/i.test(l)) return l.length > 300 ? `${l.slice(0, 300)}…` : l;
  }
  const last = lines.at(-1)?.trim();
  return last ? last.slice(0, 300) : null;
}

export function classifyExit(lines: readonly string[], code: number | null, signal: string | null, port: number): Failure {
  const text = lines.join('\n');
  const quote = lastErrorLine(lines);
  const said = quote ? `: ${quote}` : '';
  if (/EADDRINUSE|address already in use/i.test(text)) {
    return { kind: 'portInUse', retry: false, message: `port ${port} is already in use` };
  }
  if (/(ENOENT|no such file|does not exist|not found|cannot open|failed to open)/i.test(text) && /model|gguf/i.test(text)) {
    return { kind: 'modelMissing', retry: false, message: `the model file could not be opened${said}` };
  }
  if (/out of memory|failed to allocate|cudaMalloc|ErrorOutOfDeviceMemory|bad_alloc|OOM/i.test(text)) {
    return { kind: 'outOfMemory', retry: false, message: `the model does not fit in memory${said}` };
  }
  if (code === 2 || /usage:|unknown option|UsageError|must be/i.test(text)) {
    return { kind: 'badSettings', retry: false, message: `the server refused its settings${said}` };
  }
  const how = signal ? `was killed by ${signal}` : `exited with code ${code ?? '?'}`;
  return { kind: 'crashed', retry: true, message: `the server ${how}${said}` };
}

/** What to tell the user to do, per kind (the manager turns these into buttons). */
export function adviceFor(kind: FailureKind): string {
  switch (kind) {
    case 'portInUse': return 'Set strata.port to 0 (pick a free port) or to a port nothing else uses.';
    case 'modelMissing': return 'Run "Strata: Select Model" to choose a GGUF file that exists.';
    case 'badSettings': return 'Check the strata.* settings named above, then run "Strata: Restart Server".';
    case 'outOfMemory': return 'Lower strata.contextSize or strata.slots, use a smaller (more quantized) model, or spread it over more devices.';
    case 'healthTimeout': return 'The model may be very large or the machine busy; see "Strata: Show Log", then restart.';
    case 'crashed': return 'See "Strata: Show Log" for the engine output, then run "Strata: Restart Server".';
  }
}
