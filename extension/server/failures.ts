// Why the server process ended, told from its exit and last log lines, and what the user can do.

export type FailureKind = 'portInUse' | 'modelMissing' | 'badSettings' | 'outOfMemory' | 'healthTimeout' | 'engineFailed' | 'crashed';

export interface Failure {
  kind: FailureKind;
  /** One sentence for the user, with the cause. */
  message: string;
  /** Whether starting again as is can help (a crash may; a missing file will not). */
  retry: boolean;
  /** What to do, when the failure itself says more than its kind (the fit's changes that would fit). */
  advice?: string;
}

/** The fit's engine words (memory_fit.cpp) as the settings that set them. */
const FIT_SETTINGS: Record<string, string> = { slots: 'strata.slots', ctx: 'strata.contextSize', kvType: 'strata.kvType' };

/**
 * "… does not fit in memory: …; it would fit with slots 2, ctx 16384 or kvType q8_0": the changes
 * in settings' words (GPU layers have no setting: the fit chooses them unless strata.fit is off).
 */
export function fitAdvice(text: string): string | null {
  const m = /it would fit with ([^\n]+?)(?:$|\n)/m.exec(text);
  if (!m) return null;
  const changes = m[1]!.split(/, | or /).map((c) => c.trim().split(' ')).flatMap(([what, value]) => {
    if (what === 'gpuLayers') return [`${value} GPU layers (the rest on the CPU)`];
    const setting = FIT_SETTINGS[what ?? ''];
    return setting && value ? [`${setting} ${value}`] : [];
  });
  return changes.length > 0 ? `It would fit with ${changes.join(', or ')}.` : null;
}

/** "2025-01-01T00:00:00.000Z info  message": a line of the server's own log, with its level. */
const SERVER_LOG_LINE = /^\d{4}-\d\d-\d\dT[\d:.]+Z\s+(debug|info|warn|error)\s+/;

/**
 * The last line that reads as an error, for quoting; never one of the server's own info or debug
 * lines (a request log line can mention "error" and has nothing to do with an exit), and nothing
 * at all rather than an unrelated last line.
 */
export function lastErrorLine(lines: readonly string[]): string | null {
  for (let i = lines.length - 1; i >= 0; i--) {
    const l = lines[i]!.trim();
    const level = SERVER_LOG_LINE.exec(l)?.[1];
    if (level === 'info' || level === 'debug') continue;
    if (level === 'error' || /error|fail|abort|cannot|unable|invalid|must|exception|assert|segfault|segmentation|fatal|panic|core dumped/i.test(l)) {
      const text = level ? l.replace(SERVER_LOG_LINE, '') : l;
      return text.length > 300 ? `${text.slice(0, 300)}…` : text;
    }
  }
  return null;
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
  if (/does not fit in memory/.test(text)) {
    const advice = fitAdvice(text);
    return { kind: 'outOfMemory', retry: false, message: `the model does not fit in memory${said}`, ...(advice ? { advice } : {}) };
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
    case 'engineFailed': return 'The engine crashed again and again: see "Strata: Show Log", then try another model or GPU backend.';
    case 'crashed': return 'See "Strata: Show Log" for the engine output, then run "Strata: Restart Server".';
  }
}
