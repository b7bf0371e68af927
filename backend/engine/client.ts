// The one interface the server uses to talk to an engine (a replica). The implementation
// (process-client.ts) runs the native engine in a child process (engine host) so that a
// llama.cpp abort costs only that replica's in-flight requests.
import type {
  DeviceInfo, EmbedRequest, EngineOptions, EngineSnapshot, FinishReason, GenerateRequest, GrammarSpec, ModelInfo,
  PromptSegment, RequestTrace, SessionResult, StepTrace, TokenLogprob,
} from '../../native/lib/addon.js';

export type EngineConfig = Omit<EngineOptions, 'onEvents'>;

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

export interface EngineRequest {
  /** Engine-level id (unique per client for its lifetime, across epochs). */
  readonly id: number;
  /** The epoch the request was submitted in. */
  readonly epoch: number;
  /** Events as they arrive; ends after 'done'. Only one consumer. */
  readonly events: AsyncIterable<RequestEvent>;
  /** Resolves with the terminal event (also when nobody iterates events). */
  readonly done: Promise<Extract<RequestEvent, { type: 'done' }>>;
  /** Cancels it wherever it is (queued, reading the prompt, decoding). Idempotent. */
  cancel(): void;
}

/** failed: died too often in a row (a crash loop); it stays down until started again. */
export type EngineState = 'starting' | 'ready' | 'dead' | 'failed' | 'closed';

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
  /** Submits a request; never throws for engine trouble: a dead engine yields a 'done' with engineDied. */
  generate(input: GenerateInput): EngineRequest;
  /** Submits an embedding request (embedding models): an 'embedding' event per input, then 'done'. */
  embed(input: EmbedInput): EngineRequest;
  /** GBNF for JSON schemas (llama.cpp's converter) or a GBNF check, on the engine (see Engine.buildGrammar). */
  buildGrammar(spec: GrammarSpec): Promise<string>;
  tokenize(text: string, addSpecial?: boolean, parseSpecial?: boolean): Promise<number[]>;
  /** Special tokens parsed in the chat template's segments, never in plain (client) ones (addon.d.ts). */
  tokenizeSegments(segments: PromptSegment[], addSpecial: boolean): Promise<number[]>;
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
