// The one interface the server uses to talk to an engine (a replica). The implementation
// (process-client.ts) runs the native engine in a child process (engine host) so that a
// llama.cpp abort costs only that replica's in-flight requests.
import type { EngineState } from '../../contract/metrics.js';
import type {
  DeviceInfo, EmbedRequest, EngineErrorCode, EngineOptions, EngineSnapshot, FinishReason, GenerateRequest, GrammarSpec, ModelInfo,
  PromptSegment, RequestTrace, SessionResult, StepTrace, TokenLogprob,
} from '../../native/lib/addon.js';

export type EngineConfig = Omit<EngineOptions, 'onEvents'>;

export interface TokenizePartsOptions { window?: { index: number; budget: number }; addSpecial?: boolean }

/** tokenizeParts' answer: each text's tokens, in order, and the window when one was asked for. */
export interface TokenizedParts { tokens: number[][]; window: number[] | null }

/** What a caller submits: the engine request without its id (the client assigns ids). */
export type GenerateInput = Omit<GenerateRequest, 'id'>;
/** An embedding request without its id. */
export type EmbedInput = Omit<EmbedRequest, 'id' | 'inputs'> & { inputs: number[][] };

/** Events of one request, in order; exactly one 'done' ends every request. */
export type RequestEvent =
  | { type: 'admitted'; slot: number; promptTokens: number; reused: number; restored: boolean }
  | { type: 'progress'; read: number; total: number }
  /** handedAtMs: when the engine thread handed this step over (monotonic ms, see EngineOptions.onEvents); absent when unknown. */
  | {
      type: 'tokens'; ids: number[]; text: string; handedAtMs?: number;
      /** Which choice of an n > 1 request (absent: 0). */
      choice?: number;
      /** One per id when the request asked for logprobs. */
      logprobs?: TokenLogprob[];
    }
  /** Embedding models: the vector of input `index` (normalised unless asked otherwise). */
  | { type: 'embedding'; index: number; vector: Float32Array }
  | {
      type: 'done'; finish: FinishReason; error?: string;
      /** true when the engine process died or was unavailable (callers answer 503). */
      engineDied?: boolean;
      promptTokens: number; reused: number; promptMs: number | null; decodeMs: number | null;
      generated: number; text: string;
      /** The stop string that ended it, when one did (n = 1). */
      stopString?: string;
      /** Speculative tokens verified / accepted (0 without speculation). */
      drafted?: number; accepted?: number;
      /** n > 1: each choice's end, by index. */
      choices?: Array<{ finish: FinishReason; generated: number; text: string }>;
    };

export type DoneEvent = Extract<RequestEvent, { type: 'done' }>;

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
 * dead, closed). The server maps these to HTTP statuses in one table (api/engine-errors.ts).
 */
export type CallErrorCode = EngineErrorCode | 'engine_unavailable';

/** A rejected engine call (tokenize, sessions, snapshots...): the message and its code. */
export class EngineCallError extends Error {
  override readonly name = 'EngineCallError';
  constructor(message: string, readonly code: CallErrorCode) { super(message); }
}

export interface EngineStatus {
  replica: number;
  state: EngineState;
  epoch: number;
  pid: number | null;
  restarts: number;
  lastError: string | null;
  /** Frames dropped because they belonged to an unknown, finished or older-epoch request. */
  staleFrames: number;
}

export interface EngineClient {
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
  /** GBNF for JSON schemas (llama.cpp's converter) or a GBNF check, on the engine (see Engine.buildGrammar). */
  buildGrammar(spec: GrammarSpec): Promise<string>;
  tokenize(text: string, addSpecial?: boolean, parseSpecial?: boolean): Promise<number[]>;
  /** Special tokens parsed in the chat template's segments, never in plain (client) ones (addon.d.ts). */
  tokenizeSegments(segments: PromptSegment[], addSpecial: boolean): Promise<number[]>;
  /**
   * Client texts in one call, special tokens never parsed (and added only with `addSpecial`: the
   * vocabulary's BOS/CLS/SEP, for embedding inputs); with `window` the tokens of texts[index]'s prefix
   * window within `budget` (infill/prefix-window.ts). An infill or embedding request's whole
   * tokenization is one round trip to the engine host.
   */
  tokenizeParts(texts: string[], opts?: TokenizePartsOptions): Promise<TokenizedParts>;
  detokenize(tokens: number[]): Promise<string>;
  /** `meta`: the server's description of the session, stored in the file beside the state. */
  saveSession(path: string, tokens: number[], identity: string, meta: string): Promise<SessionResult>;
  loadSession(path: string, identity: string): Promise<SessionResult & { tokenIds: number[]; meta: string }>;
  snapshot(): Promise<EngineSnapshot>;
  traces(): Promise<{ steps: StepTrace[]; requests: RequestTrace[] }>;
  devices(): Promise<DeviceInfo[]>;
  /** Subscribe to state changes (ready, dead, restarted with a new epoch). Returns an unsubscribe. */
  onStatus(listener: (s: EngineStatus) => void): () => void;
  /** Stops the engine (in-flight requests end with 'cancel') and the process. */
  close(): Promise<void>;
}
