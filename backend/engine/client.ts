// The one interface the server uses to talk to an engine (a replica). The implementation
// (process-client.ts) runs the native engine in a child process (engine host) so that a
// llama.cpp abort costs only that replica's in-flight requests.
import type { EngineState } from '../../contract/metrics.js';
import type { EmbedRequest, EngineErrorCode, EngineEvent, EngineOptions, FinishReason, GenerateRequest, ModelInfo } from '../../native/lib/addon.js';
import type { CallName, EngineCalls } from './calls.js';

export type EngineConfig = Omit<EngineOptions, 'onEvents'>;

/** What a caller submits: the engine request without its id (the client assigns ids). */
export type GenerateInput = Omit<GenerateRequest, 'id'>;
/** An embedding request without its id. */
export type EmbedInput = Omit<EmbedRequest, 'id' | 'inputs'> & { inputs: number[][] };

/** An engine event of one type, without the engine-level id (its request is known). */
type RequestEventOf<T extends EngineEvent['type']> = Omit<Extract<EngineEvent, { type: T }>, 'id'>;

/**
 * A request's 'done': the engine's (EngineEvent, addon.d.ts) and the one this side makes when the
 * engine never got there or died (synthesizedDone).
 */
export type DoneEvent = Omit<RequestEventOf<'done'>, 'promptMs' | 'decodeMs'> & {
  /** null for a phase the request never reached (the engine says 0), and in a 'done' made here. */
  promptMs: number | null; decodeMs: number | null;
  /** true when the engine process died or was unavailable (callers answer 503). */
  engineDied?: boolean;
};

/**
 * Events of one request, in order; exactly one 'done' ends every request. The engine's events
 * (EngineEvent, addon.d.ts) as they are, without their id, plus what this side adds.
 */
export type RequestEvent =
  | RequestEventOf<'admitted'>
  | RequestEventOf<'progress'>
  /** handedAtMs: when the engine thread handed this step over (monotonic ms, see EngineOptions.onEvents); absent when unknown. */
  | (RequestEventOf<'tokens'> & { handedAtMs?: number })
  | RequestEventOf<'embedding'>
  | DoneEvent;

/** How a request ends without the engine's own 'done' (it never got there, or the engine is gone). */
export interface LocalEnd {
  finish: FinishReason;
  error?: string;
  engineDied?: boolean;
}

/**
 * The one way a 'done' is made on this side of the engine (a request that ended before, or
 * without, its engine): no phase durations, the figures known so far.
 */
export function synthesizedDone(end: LocalEnd, figures: { promptTokens: number; reused: number; generated: number }): DoneEvent {
  return {
    type: 'done', finish: end.finish,
    ...(end.error !== undefined ? { error: end.error } : {}),
    ...(end.engineDied ? { engineDied: true } : {}),
    promptTokens: figures.promptTokens, reused: figures.reused, promptMs: null, decodeMs: null,
    generated: figures.generated, text: '',
  };
}

/**
 * Receives a request's events as they arrive, synchronously and in order, ending with exactly
 * one 'done'. The scheduler passes one, so the route reads the request's one buffer (its Job).
 */
export type RequestSink = (ev: RequestEvent) => void;

export interface EngineRequest {
  /** Engine-level id (unique per client for its lifetime, across epochs). */
  readonly id: number;
  /** The epoch the request was submitted in. */
  readonly epoch: number;
  /**
   * Events as they arrive; ends after 'done'. Only one consumer, and only for a request
   * submitted without a sink (a sink receives them instead; reading them here then throws).
   */
  readonly events: AsyncIterable<RequestEvent>;
  /** Resolves with the terminal event (also when nobody iterates events). */
  readonly done: Promise<DoneEvent>;
  /** Cancels it wherever it is (queued, reading the prompt, decoding). Idempotent. */
  cancel(): void;
}

/**
 * Why an engine call failed: the engine's own code (EngineErrorCode, native/src/engine_error.h),
 * or 'engine_unavailable' when no engine could take or finish the call (starting, restarting,
 * dead, closed). The server maps these to HTTP statuses in one table (validation/engine-errors.ts).
 */
export type CallErrorCode = EngineErrorCode | 'engine_unavailable';

/**
 * A rejected engine call (tokenize, sessions, snapshots...): which call, the engine's (or this
 * side's) words, and the code that decides the HTTP status (validation/engine-errors.ts). The
 * message is "<call>: <detail>"; a route that quotes the cause alone quotes `detail`, never a
 * message with its prefix cut off.
 */
export class EngineCallError extends Error {
  override readonly name = 'EngineCallError';
  constructor(readonly call: CallName, readonly detail: string, readonly code: CallErrorCode) { super(`${call}: ${detail}`); }
}

/**
 * An engine process's end as this side saw it: the signal or exit code, the last error line, the
 * deaths in a row (the crash-loop policy's count), the model and its devices. /health and
 * /metrics send it as contract/health.ts EngineDeathBody.
 */
export interface EngineDeath {
  epoch: number;
  pid: number | null;
  signal: string | null;
  exitCode: number | null;
  /** The server's reason for ending it, the engine's fatal message or load error, else its last error log line. */
  lastError: string | null;
  deathsInRow: number;
  /** The engine stays down after this death (state 'failed'). */
  gaveUp: boolean;
  model: string;
  devices: string[];
  /** ms since the epoch. */
  at: number;
}

export interface EngineStatus {
  replica: number;
  state: EngineState;
  epoch: number;
  pid: number | null;
  restarts: number;
  lastError: string | null;
  /** The last time its engine process died (null: never in this client's life). */
  lastDeath: EngineDeath | null;
  /** Frames dropped because they belonged to an unknown, finished or older-epoch request. */
  staleFrames: number;
}

/** One engine (a replica): its lifecycle, its requests, and every call of CallSpecs (calls.ts) as a method. */
export interface EngineClient extends EngineCalls {
  readonly replica: number;
  /** Model info of the current epoch; null until the first start succeeds. */
  readonly info: ModelInfo | null;
  status(): EngineStatus;
  /** Starts the engine process and waits for it to load the model (rejects with its error). */
  start(): Promise<ModelInfo>;
  /**
   * Submits a request; never throws for engine trouble: a dead engine yields a 'done' with
   * engineDied. With a sink, every event goes to it (and none is buffered for `events`).
   */
  generate(input: GenerateInput, sink?: RequestSink): EngineRequest;
  /** Submits an embedding request (embedding models): an 'embedding' event per input, then 'done'. */
  embed(input: EmbedInput, sink?: RequestSink): EngineRequest;
  /** Subscribe to state changes (ready, dead, restarted with a new epoch). Returns an unsubscribe. */
  onStatus(listener: (s: EngineStatus) => void): () => void;
  /** Stops the engine (in-flight requests end with 'cancel') and the process. */
  close(): Promise<void>;
}
