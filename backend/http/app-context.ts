// What every route handler may use. Built by server/app.ts; handlers get this narrow view,
// never the server object itself. Declared here, by the routes that need it (server/ composes
// the app and imports http/, never the other way round).
import type { EngineClient } from '../engine/client.js';
import type { InstalledBackend } from '../gpu-backends/install.js';
import type { MachineReport } from '../gpu-backends/machine.js';
import type { CpuPath } from '../engine/cpu-path.js';
import type { BodyReader } from './body.js';
import type { SlowReaderWatch } from './slow-readers.js';
import type { Logger } from '../log/logger.js';
import type { TraceCollector } from '../metrics/traces.js';
import type { RequestLedger } from '../scheduler/request-ledger.js';
import type { Scheduler } from '../scheduler/scheduler.js';
import type { SessionService } from '../sessions/session-service.js';
import type { ResponseStore } from '../responses/response-store.js';
import type { PrefixStore } from '../prefix-cache/prefix-store.js';
import type { ReasoningMode } from '../chat/thinking-switch.js';
import type { ModelView } from '../served-model/model-view.js';
import type { ModelActionBody, ModelMetricsBody, ModelRole, ModelState } from '../../contract/models.js';

/** The serve settings the routes read (server/config.ts's ServerConfig has them all). */
export interface RouteSettings {
  /** Required on every route but /health when set (Bearer or x-api-key). */
  readonly apiKey: string | null;
  readonly bodyLimitMib: number;
  readonly writeStallMs: number;
  readonly keepAliveMs: number;
  /** Infill with a supersede_key arriving this soon after the previous one of its key waits this long (0 = off). */
  readonly infillDelayMs: number;
  readonly fimOrder: 'auto' | 'psm' | 'spm';
  /** Speculative decoding (--spec): under auto, infill requests draft from their own n-grams. */
  readonly spec: 'auto' | 'none' | 'mtp' | 'ngram' | 'draft';
  /** Thinking by default (--reasoning): auto leaves it to the template; on / off set its enable_thinking. */
  readonly reasoning: ReasoningMode;
  /** Thinking tokens allowed before the engine ends the thinking (--reasoning-budget; -1: no limit). */
  readonly reasoningBudget: number;
  /** The thinking budgets of the efforts low, medium and high (--reasoning-effort-budgets). */
  readonly reasoningEffortBudgets: readonly number[];
  /** Tokens an answer may have when the request names no limit (--max-output-tokens; null: the room in the context). */
  readonly maxOutputTokens: number | null;
  /** The model-load limit (--engine-ready-timeout-ms): /health says it while loading, so the extension waits as long. */
  readonly engineReadyTimeoutMs: number;
  /** --first-tool-call: 'required' makes a conversation's first answer a tool call (tests with random-weight models); absent: 'auto'. */
  readonly firstToolCall?: 'auto' | 'required';
}

export interface AppContext {
  readonly config: RouteSettings;
  readonly log: Logger;
  readonly ledger: RequestLedger;
  readonly scheduler: Scheduler;
  readonly engines: readonly EngineClient[];
  readonly traces: TraceCollector;
  readonly sessions: SessionService;
  /** Stored Responses API responses, shared by every model. */
  readonly responses: ResponseStore;
  /** The prefix cache's folder, shared by every model; null when it is off (--prefix-cache-mib 0). */
  readonly prefixes: PrefixStore | null;
  /** Streams whose clients fall behind are cut (--slow-reader-ms). */
  readonly readers: SlowReaderWatch;
  /** Reads request bodies within the size limit, the server-wide read budget and the read timeout. */
  readonly bodies: BodyReader;
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
  /** Every served model (this context is one of them). */
  readonly models: ModelDirectory;
}

/** A held model: its context stays loaded until release() (a model is never unloaded while held). */
export interface ModelLease {
  readonly app: AppContext;
  release(): void;
}

/** One served model as /v1/models and /metrics show it. */
export interface ServedModelRow extends ModelMetricsBody {
  /** Its context while loaded. */
  app: AppContext | null;
  default: boolean;
}

/** The served models (backend/model-pool): routing by name or role, loads, unloads. */
export interface ModelDirectory {
  /** More than one model is served (one model answers whatever `model` a request names, as before). */
  readonly several: boolean;
  /** The model a request names, else the first of `role`, else the default; 404 model_not_found. */
  pick(name: string | null, role: ModelRole | null): string;
  state(name: string): ModelState;
  /** Holds the model for a request, loading it first (bounded by the ready timeout). */
  acquire(name: string): Promise<ModelLease>;
  load(name: string): Promise<ModelActionBody>;
  /** 409 while it has requests in flight. */
  unload(name: string): Promise<ModelActionBody>;
  rows(): ServedModelRow[];
  /** The context of routes that name no model (health, devices, metrics): the default model's while it has one, else a loaded model's. */
  front(): AppContext;
  budget(): { maxLoaded: number | null; ramBudget: number; idleUnloadMs: number; deviceMargin: number };
}
