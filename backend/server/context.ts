// What every route handler may use. Built by app.ts; handlers get this narrow view, never
// the server object itself.
import type { EngineClient } from '../engine/client.js';
import type { InstalledBackend } from '../backends/install.js';
import type { MachineReport } from '../backends/machine.js';
import type { CpuPath } from '../engine/cpu-path.js';
import type { SlowReaderWatch } from '../http/slow-readers.js';
import type { Logger } from '../log/logger.js';
import type { TraceCollector } from '../metrics/traces.js';
import type { RequestTable } from '../scheduler/request-table.js';
import type { Scheduler } from '../scheduler/scheduler.js';
import type { SessionService } from '../sessions/session-service.js';
import type { ServerConfig } from './config.js';
import type { ModelView } from './model-view.js';

export interface AppContext {
  readonly config: ServerConfig;
  readonly log: Logger;
  readonly table: RequestTable;
  readonly scheduler: Scheduler;
  readonly engines: readonly EngineClient[];
  readonly traces: TraceCollector;
  readonly sessions: SessionService;
  /** Streams whose clients fall behind are cut (--slow-reader-ms). */
  readonly readers: SlowReaderWatch;
  readonly startedAt: number;
  /** The GGUF served (the demo model's path when none was given). */
  readonly modelPath: string;
  /** system_fingerprint of responses: build and model. */
  readonly fingerprint: string;
  /** null until an engine has loaded the model. */
  model(): ModelView | null;
  stopping(): boolean;
  /** The CPU path the engines run (probed once per machine); null when engines are not real processes. */
  cpuPath(): Promise<CpuPath> | null;
  /** GPU backends the engines were given and what this machine offers them (read once). */
  gpuBackends(): { installed: InstalledBackend[]; machine: MachineReport };
}
