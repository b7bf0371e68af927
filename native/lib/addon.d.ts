// Hand-written types of the native addon (native/build/strata.node). This file is the
// contract between native/src (C++) and backend/ (TypeScript): change both together.
//
// Threads: the Engine's llama_context is owned by its engine thread. JS calls only enqueue
// commands (submit, cancel, park/session work) or read thread-safe snapshots; events come
// back batched, one onEvents call per engine step for all sequences.

/** The KV cache types (contract/kv-types.ts lists them as values for the server and the settings). */
export type KvType = 'f16' | 'q8_0' | 'q4_0';
export type FinishReason = 'stop' | 'length' | 'cancel' | 'error';
export type DeviceType = 'cpu' | 'gpu' | 'igpu' | 'accel';

export interface DeviceInfo {
  /** Stable name as ggml reports it: "CPU", "CUDA0", "Vulkan0", "RPC0"… Used in EngineOptions.devices. */
  name: string;
  description: string;
  type: DeviceType;
  /** Backend registry name: "CPU", "CUDA", "RPC"… */
  backend: string;
  memoryFree: number;
  memoryTotal: number;
}

export interface EngineOptions {
  model: string;
  /**
   * A projector GGUF (llama.cpp's mmproj) made for this model: the engine then reads images
   * (prepareImage, GenerateRequest.images) through libmtmd. A load error names a projector made
   * for another model (its embedding size) or of a kind the engine does not place (M-RoPE).
   */
  mmproj?: string;
  /** Devices by name (see listDevices); default: all GPUs, else CPU. */
  devices?: string[];
  /** ggml RPC servers "host:port"; each becomes a device (RPC0, RPC1, …). */
  rpc?: string[];
  splitMode?: 'none' | 'layer' | 'row';
  /** Proportions per offload device, in device order. */
  tensorSplit?: number[];
  mainGpu?: number;
  /** Layers on GPU devices; -1 = all (default). */
  gpuLayers?: number;
  /**
   * Context tokens per slot, each slot its own KV. Absent on a text model: one KV pool the slots
   * share (llama's kv_unified), all of which one sequence may use: the training context, fitted to
   * memory with `fit` (else min(4096 x slots, training context)); a step that finds no room ends the
   * request admitted last ('done' errorCode 'context_full'). Absent on an embedding model: min(4096,
   * train ctx) per slot. Over the model's limit -> error.
   */
  ctx?: number;
  /** Concurrent sequences (default 4). */
  slots?: number;
  /** Token budget per engine step (n_batch, default 512); at least `slots`. */
  batch?: number;
  ubatch?: number;
  /**
   * Prompt tokens per step (P; default: 64 on CPU, batch with GPU offload) where a big step would hold
   * others back; elsewhere a prompt gets the whole batch less the decode tokens. When P is below batch:
   * a step that a prompt with at most P tokens left joins gives the other prompts at most P (that prompt
   * is read whole), and while every slot is taken or requests wait for one, with others decoding, a
   * prompt with over 4P tokens left reads P/4 (at least 8).
   */
  decodePromptBudget?: number;
  /**
   * ms an idle engine waits for more requests after the first arrives, before its first step
   * (0..1000; default 8 on CPU, 0 with GPU offload), so a burst of clients is read in one step.
   * It ends early once the requests fill every free slot.
   */
  admitWindowMs?: number;
  threads?: number;
  threadsBatch?: number;
  kvType?: KvType;
  flashAttn?: 'auto' | 'on' | 'off';
  /** Host RAM budget for parked conversations, MiB (default 1024; 0 disables parking). */
  parkBudgetMiB?: number;
  /** Refuse to park when MemAvailable would fall below this, MiB (default 1024). */
  freeRamFloorMiB?: number;
  /** Per-step trace records kept (ring, default 2048). */
  traceSteps?: number;
  /**
   * Which of ggml's CPU variant libraries this process loads ('auto': ggml's best score for this
   * CPU). Backends load once per process: a later load with another variant is an error.
   */
  cpuVariant?: string;
  /** Folders of installed backend libraries (GPU backends) tried after the addon's own folder. */
  backendDirs?: string[];
  /**
   * llama's use_extra_bufts (default true): weights in ggml's extra CPU buffer types, repacked for
   * AMX tiles or wider SIMD layouts. false keeps them as stored (slower prompt reads, no such kernels).
   */
  cpuRepack?: boolean;
  /**
   * Batch-invariant CPU math (default false): every matmul row through one kernel whatever the row
   * count, reference flash attention (no KV split, no query tiling), no repacked weights. Greedy
   * output is then the same solo, batched, chunked or re-read (docs/design.md, Exactness on the CPU), at the cost
   * measured there. Process-wide: once one engine of a process sets it, the process computes so.
   */
  deterministic?: boolean;
  /** Speculative decoding (default off): drafts verified in the same batch as everything else. */
  speculative?: SpeculativeOptions;
  /**
   * Embeddings instead of text: 'auto' (default) when the GGUF declares a pooling type or its
   * architecture is an encoder (BERT family); 'on' also for other models (mean pooling unless the
   * GGUF says otherwise); 'off' never. An embedding engine answers embed(), not submit().
   */
  embeddings?: 'auto' | 'on' | 'off';
  /**
   * llama's op_offload (default true): with layers left on the CPU, a GPU device runs their
   * matmuls for steps of 32+ tokens (ggml's scheduler streams the weights to it). Faster prompt
   * reads with partial offload; but then a token's logits depend on how many tokens share its
   * step, so batched and solo greedy runs may differ. false keeps every op where its weights are.
   */
  opOffload?: boolean;
  /**
   * Fit to free memory before loading, with llama.cpp's own fitter (common/fit.cpp, what
   * llama-server's --fit runs): GPU layers and tensor split unless gpuLayers/tensorSplit are given,
   * and the shared pool when ctx is not given (between fitCtxMin x slots and the training context),
   * so that the weights, the KV cache and the compute buffers leave fitMarginMiB free on every
   * device. A plan that still does not fit rejects the load with the single changes that would
   * (fewer slots, a smaller ctx, a quantized kvType, fewer gpuLayers). ModelInfo.fit reports it.
   * 'auto': fit when the model goes to an offload device (a GPU, an RPC server), or to size the
   * shared pool (no ctx; on the CPU a plan that does not fit then loads with the least pool); default false.
   */
  fit?: boolean | 'auto';
  /**
   * Bytes other models of the same server hold per device (by name). A device whose free memory
   * does not show them (lavapipe reports its whole heap as free) keeps them free as extra margin.
   */
  fitReserved?: Record<string, number>;
  /** Memory to leave free per device, MiB (default 1024, as llama.cpp's --fit-target). */
  fitMarginMiB?: number;
  /** The least context per slot the fitter may choose when ctx is not given (default 4096, llama.cpp's --fit-ctx): the pool is at least this x slots. */
  fitCtxMin?: number;
  /**
   * Called on the JS thread once per engine step with that step's events, in order.
   * handedAtMs: when the engine thread handed the step over, in ms (fractional) of
   * std::chrono::steady_clock, which is CLOCK_MONOTONIC on Linux: the clock of
   * process.hrtime.bigint(), so `Number(process.hrtime.bigint()) / 1e6 - handedAtMs` is the
   * delay since, in this process or another on the same machine.
   */
  onEvents: (events: EngineEvent[], handedAtMs: number) => void;
  /**
   * Called once when the engine thread ended on an error of its own (std::bad_alloc, any
   * exception): every request has already ended with 'error' and this reason (onEvents), and the
   * engine is closed. The engine host reports it and exits, so the server restarts the engine.
   */
  onFatal?: (reason: string) => void;
}

export interface SpeculativeOptions {
  /** Prompt lookup: draft the tokens that followed the latest earlier occurrence of the sequence's last n-gram. */
  ngram?: boolean;
  /**
   * A GGUF with the model's exact vocabulary: a draft model (drafts where n-gram lookup found
   * nothing, or alone), or a drafter made for the model that reads its hidden states (an EAGLE-3
   * head, a DFlash or DSpark block drafter: recognised from the file, drafts in place of n-grams).
   */
  draftModel?: string;
  /** Draft tokens per sequence per step (default 8, 1..256). */
  draftMax?: number;
  /** No draft shorter than this (default 1). */
  draftMin?: number;
  /**
   * Which n-gram drafter `ngram` uses: 'lookup' (default: the latest earlier occurrence of the
   * sequence's last n-gram, ngramMin..ngramMax) or one of llama.cpp's, with its own sizes ('simple',
   * 'map-k', 'map-k4v', 'mod', 'cache': llama-server's --spec-type ngram-*).
   */
  ngramKind?: NgramKind;
  /** n-gram lengths tried, longest first (default 2..4). */
  ngramMin?: number;
  ngramMax?: number;
  /** Draft model, drafter and MTP head: stop a draft at a token they give less probability than this (default 0.5; 0 = never). */
  draftPMin?: number;
  /**
   * The model's own multi-token-prediction (MTP, NextN) head: 'auto' (default) drafts with it when
   * the model has one and no draftModel is given (in place of n-grams); 'on' always (a model
   * without one fails to load); 'off' never (its layers are not loaded).
   */
  mtp?: 'auto' | 'on' | 'off';
}

export interface SamplingParams {
  /** 0 (default) = greedy. */
  temperature?: number;
  topK?: number;
  topP?: number;
  minP?: number;
  seed?: number;
  repeatPenalty?: number;
  repeatLastN?: number;
  frequencyPenalty?: number;
  presencePenalty?: number;
  /** [token id, bias] pairs; bias -Infinity bans the token. */
  logitBias?: Array<[number, number]>;
  /**
   * A thinking budget: once `tokens` tokens were sampled inside the thinking (opened by the `open`
   * tokens at the output's start, or already by the prompt: `inside`), the next tokens are `close`
   * (the family's end of thinking), then sampling goes on. Not applied while a grammar constrains.
   */
  thinkingBudget?: { tokens: number; open: number[]; close: number[]; inside: boolean };
}

export interface GenerateRequest {
  /**
   * Caller-chosen id, unique among this engine's live requests (positive safe integer). It is
   * free again once its 'done' event has been delivered; a late cancel() never reaches the reuse.
   */
  id: number;
  /**
   * Prompt tokens (use Engine.tokenize for text). Must be non-empty and fit the slot context. An
   * image's positions hold its placeholder ids (negative; PreparedImage.tokens) and are listed in `images`.
   */
  prompt: number[] | Int32Array;
  /**
   * The prompt's images, in order: `data` (the image file's bytes) is read at prompt[at..] where
   * its placeholders are (prepareImage's tokens from its `at`). Needs a model loaded with mmproj;
   * text must follow the last image. An image's KV is reused like any prefix: the placeholders
   * are derived from a hash of the bytes.
   */
  images?: ImageInput[];
  /** 0 reads the prompt only (finish 'length', e.g. to warm the cache). */
  maxTokens: number;
  sampling?: SamplingParams;
  /** Generation stops when the text contains one of these; the stop string is not emitted. */
  stop?: string[];
  /** Extra token ids that end generation (EOG tokens always do unless ignoreEos). */
  stopTokens?: number[];
  /**
   * Token ids whose text is rendered into the output text even when they are special/control
   * tokens (e.g. a tool-call marker such as Llama 3.1's <|python_tag|>); other special tokens
   * render as "". Ids must be in the vocabulary. A token that ends generation is still not emitted.
   */
  renderTokens?: number[];
  ignoreEos?: boolean;
  /** false: read the whole prompt, reusing no cached KV (default true). */
  cachePrompt?: boolean;
  /**
   * The prompt's first tokens that other conversations share (a coding agent's system prompt and
   * tools), 0..prompt length (default 0: none said). Used on a recurrent model (ModelInfo.recurrent),
   * whose state cannot be cut back: reading past them, the engine parks a copy of the sequence there
   * (when parking is on and the park holds none yet), which the next prompt starting with the same
   * tokens restores, and which saveSession of exactly these tokens writes to a file.
   */
  sharedPrefix?: number;
  /**
   * Higher is admitted first, equal priority FIFO, when more requests are submitted than there are
   * slots (direct use of the addon; the server queues in its own scheduler and submits only into
   * free slots, see native/src/engine_admit.cpp AdmitWaiting).
   */
  priority?: number;
  /**
   * GBNF (root rule "root") that every output must match (see buildGrammar); each sequence samples
   * with its own copy. A grammar that does not parse is a RangeError naming the parser's reason.
   */
  grammar?: string;
  /**
   * Makes `grammar` lazy: the output is free text until it holds one of these triggers (e.g. a
   * tool call's opener), and the grammar constrains it from the trigger's first character on (so
   * the grammar starts with the trigger). Each sequence watches its own output.
   */
  grammarTriggers?: GrammarTriggers;
  /**
   * Log-probabilities on every 'tokens' event: 0 the emitted tokens' own, N (at most 100) also the N
   * most likely tokens at each position. Raw model distribution (log-softmax of the logits).
   */
  logprobs?: number;
  /**
   * Choices (1..slots, default 1): n sequences that share the prompt's KV (read once, then copied),
   * each with its own sampler (seed + choice index when a seed is set). Needs n free slots at once.
   */
  n?: number;
  /** Speculative draft tokens per step for this request: 0 none; default the engine's draftMax. */
  draftMax?: number;
  /**
   * Drafts from the sequence's own n-grams for this request (the engine's n-gram drafter, Strata's
   * prompt lookup when it has none): true on, false off; default as speculative.ngram says. The
   * infill route turns it on under --spec auto: the code around the cursor repeats.
   */
  ngram?: boolean;
  /**
   * Predicted output (OpenAI's `prediction`): tokens the answer is expected to repeat. They are the
   * speculative draft while the answer follows them, and again from where it rejoins them after a
   * change; where their draft stops short or the answer has left them, the sequence's own n-grams
   * draft (whatever speculative.ngram says). The output is the same as without (drafts are
   * verified). draftMax caps the draft per step (default 32). Empty: none.
   */
  prediction?: number[];
}

/** Where a lazy grammar starts (GenerateRequest.grammarTriggers); at least one trigger, each 1-256 bytes. */
export interface GrammarTriggers {
  /** Anywhere in the answer. */
  words?: string[];
  /** Only where the answer starts, after whitespace (a bare JSON call). */
  atStart?: string[];
  /**
   * A thinking block, inside which nothing triggers: the prompt opened it (`inside`), or the output
   * starts with `open`; triggers count from `close` on.
   */
  thinking?: { open: string; close: string; inside: boolean };
}

/** One input of an embedding model: its tokens (BOS/CLS/SEP as the vocabulary adds them). */
export interface EmbedRequest {
  id: number;
  /** Each at most min(ctx, batch) tokens: an input is read in one step. */
  inputs: Array<number[] | Int32Array>;
  /** L2-normalise each vector (default true). */
  normalize?: boolean;
}

export interface TokenLogprob {
  logprob: number;
  /** The token's bytes (a token may hold part of a UTF-8 character). */
  bytes: number[];
  /** The most likely tokens at this position, most likely first (as many as the request asked for). */
  top: Array<{ id: number; logprob: number; bytes: number[] }>;
}

export type EngineEvent =
  | { type: 'admitted'; id: number; slot: number; promptTokens: number; reused: number; restored: boolean }
  | { type: 'progress'; id: number; read: number; total: number }
  /**
   * ids: tokens sampled this step; text: their UTF-8-complete text (held back until complete, stop
   * strings withheld). A token that ends generation (EOG unless ignoreEos, a stopTokens entry) is
   * not emitted; `generated` counts the emitted ids. After a request, its slot holds the prompt
   * and every emitted token except the last one (sampled, never decoded).
   */
  | {
      type: 'tokens'; id: number; ids: number[]; text: string;
      /** Which choice (n > 1); absent for choice 0. */
      choice?: number;
      /** One per id when the request asked for logprobs. */
      logprobs?: TokenLogprob[];
    }
  /** Embedding models: the pooled vector of input `index`. */
  | { type: 'embedding'; id: number; index: number; vector: Float32Array }
  | {
      type: 'done'; id: number; finish: FinishReason; error?: string;
      /** 'context_full': the KV pool the slots share had no room, and this request was admitted last. */
      errorCode?: 'context_full';
      promptTokens: number; reused: number; promptMs: number; decodeMs: number; generated: number;
      /** Text withheld for a partial stop match and released at the end. */
      text: string;
      /** The stop string that ended the request (n = 1; absent when none did). */
      stopString?: string;
      /** Speculative tokens verified and, of those, accepted (summed over choices; the engine always sets them). */
      drafted?: number; accepted?: number;
      /** Of the drafted, prediction tokens the answer followed and prediction tokens verified and thrown away (0 without a prediction). */
      predictionAccepted?: number; predictionRejected?: number;
      /** n > 1: each choice's end (the top-level finish is 'error'/'cancel' if any choice's was, else choice 0's). */
      choices?: Array<{ finish: FinishReason; generated: number; text: string }>;
    };

export interface SlotSnapshot {
  slot: number;
  state: 'idle' | 'prompt' | 'decode';
  requestId: number | null;
  heldTokens: number;
  promptTokens: number;
  generated: number;
}

export interface ParkEntry { tokens: number; bytes: number; lastUsedMs: number; }

export interface EngineSnapshot {
  slots: SlotSnapshot[];
  queued: number;
  park: { entries: ParkEntry[]; bytes: number; budget: number; hits: number; misses: number; evictions: number; refusedLowRam: number };
  totals: {
    promptTokens: number; reusedTokens: number; generated: number; steps: number; requests: number;
    /** Prompt tokens that went through a decode (cancelled requests' too), since the engine started. */
    promptComputed: number;
    /** Speculative tokens verified / accepted; embedding inputs pooled. */
    drafted: number; accepted: number; embedded: number;
    /**
     * Per draft position (index 0: a draft's first token): drafts that reached it, and those whose
     * tokens the model accepted up to and including it.
     */
    draftPositions: Array<{ drafted: number; accepted: number }>;
  };
}

export interface StepTrace {
  step: number;
  /** ms since engine start */
  t: number;
  buildMs: number; decodeMs: number; sampleMs: number; detokMs: number;
  decodeTokens: number; promptTokens: number; sequences: number;
  /** Speculative tokens verified this step and accepted; ms in the draft model's decodes. */
  draftTokens: number; acceptedTokens: number; draftMs: number;
}

export interface RequestTrace {
  id: number;
  /** ms since engine start for each mark that happened */
  queued: number; admitted?: number; promptDone?: number; firstToken?: number; finished?: number;
  slot?: number; reused: number; restored: boolean; promptLegs: Array<{ t: number; tokens: number; ms: number }>;
  drafted: number; accepted: number; choices: number;
}

/** One image of a prompt (GenerateRequest.images). */
export interface ImageInput {
  /** Where its placeholders start in the prompt. */
  at: number;
  /** The image file's bytes. */
  data: Uint8Array;
}

/** An image prepared for a prompt (Engine.prepareImage). */
export interface PreparedImage {
  /** XXH3-128 of the bytes (hex): the image's identity, from which its placeholders derive. */
  id: string;
  /** What the image takes in the prompt: marker tokens, then `n` placeholders from `at`. */
  tokens: number[] | Int32Array;
  at: number;
  n: number;
  /** Decoded size in pixels. */
  width: number;
  height: number;
}

export interface ModelInfo {
  description: string;
  architecture: string;
  params: number;
  sizeBytes: number;
  trainCtx: number;
  /** The most one sequence may hold, prompt and answer (a slot's context, or the shared pool up to trainCtx). */
  ctx: number;
  /** KV cells in all: the pool the slots share (kvUnified), else ctx x slots. */
  ctxPool: number;
  /** One KV pool the slots share (no ctx given): sequences take what they use of it. */
  kvUnified: boolean;
  /**
   * Recurrent layers (Mamba, RWKV, gated delta nets; hybrids such as Qwen3.5 and Qwen3-Next): a
   * sequence's state cannot be cut back to an earlier position, only replaced by a copy taken there.
   */
  recurrent: boolean;
  slots: number;
  vocabSize: number;
  bos: number; eos: number; eot: number;
  /** null unless the vocab has prefix, suffix and middle tokens; pad/rep/sep are -1 where absent. */
  fim: { prefix: number; suffix: number; middle: number; pad: number; rep: number; sep: number } | null;
  chatTemplate: string | null;
  /** The projector the model reads images through (EngineOptions.mmproj), or null. */
  mmproj: string | null;
  /**
   * Texts of the vocabulary's control and unknown tokens (`<|im_start|>`, `<s>`…): what special-token
   * parsing turns into one token, so what must stay text when a client wrote it (see tokenizeSegments).
   */
  controlTexts: string[];
  /** All string-valued GGUF metadata (general.name, tokenizer.ggml.model, …). */
  metadata: Record<string, string>;
  /** Devices the model was placed on and layers per device. */
  placement: Array<{ device: string; layers: number; memoryFree: number; memoryTotal: number }>;
  kvType: string;
  /** Token budget of one engine step (n_batch), as this engine runs it (EngineOptions.batch or its default). */
  batch: number;
  decodePromptBudget: number;
  admitWindowMs: number;
  flashAttn: boolean;
  /** The CPU path this engine runs: variant (null in a build without variants) and repacking. */
  /** deterministic: the batch-invariance bits set in this process (0: off; 7: all, see backends.h). */
  cpu: { variant: string | null; repack: boolean; deterministic: number };
  /** What the process's backend load did. */
  backends: BackendReport;
  /** EngineOptions.opOffload as used. */
  opOffload: boolean;
  /**
   * Buffers llama.cpp allocated for this model and context, and for the drafting beside them (a
   * draft model's weights and context; the MTP head's or a drafter's context), by kind and buffer
   * type ("CPU", "CPU_Mapped", "Vulkan0", "CUDA0", "RPC0[host:port]"…): where the weights, the KV
   * cache (a recurrent model's state too: kind kv) and the compute buffers live.
   */
  buffers: Array<{ kind: 'model' | 'kv' | 'compute' | 'output'; buffer: string; mib: number }>;
  /**
   * Embedding models: how vectors are pooled and their size; null for text models. Rerankers
   * (pooling 'rank', a classification head) put out `dimensions` scores per input, not normalised.
   */
  embedding: { pooling: 'mean' | 'cls' | 'last' | 'rank'; dimensions: number } | null;
  /**
   * Rerankers: how a query and a document become one input, as llama-server lays it out: the GGUF's
   * "rerank" template with {query} and {document} replaced, else prefix + query + separator +
   * document + suffix (special tokens from the vocabulary's add-BOS/EOS/SEP flags). null otherwise.
   */
  rerank: { template: string | null; prefix: number[]; separator: number[]; suffix: number[] } | null;
  /**
   * Speculative decoding as loaded (draftMax 0: off); mtp: drafts come from the model's MTP head;
   * draftKind: what draftModel is ('model': a draft model; 'eagle3', 'dflash', 'dspark': a drafter
   * reading the model's hidden states), null without one; ngramKind: ngram's drafter, null without.
   */
  speculative: { ngram: boolean; ngramKind: NgramKind | null; mtp: boolean; draftModel: string | null; draftKind: DraftKind | null; draftMax: number };
  /** What the fit decided (EngineOptions.fit); null when the model loaded without fitting. */
  fit: FitReport | null;
}

/** One device in a fit ("Host" for the CPU's memory): what the plan puts there, bytes. */
export interface FitDeviceUse {
  device: string;
  /** Layers placed there (of nLayer; the output layer is counted on the last GPU). */
  layers: number;
  /** Free and total memory as the device reported it when measured (the host: MemAvailable, MemTotal). */
  free: number;
  total: number;
  /** Weights, KV cache (and recurrent state), compute buffers, as llama.cpp's no-alloc load measures them. */
  model: number;
  context: number;
  compute: number;
}

/** A single change to the asked options that fits with the margin, every asked layer offloaded. */
export interface FitSuggestion {
  /** In EngineOptions' words: "slots 2", "ctx 2048", "kvType q8_0", "gpuLayers 20". */
  change: string;
  slots: number;
  ctx: number;
  kvType: KvType;
  gpuLayers: number;
}

export interface FitReport {
  /** fits: as asked; adjusted: the fitter moved layers off the GPU or chose the context; does_not_fit: not even so. */
  status: 'fits' | 'adjusted' | 'does_not_fit';
  /** Layers on offload devices, of nLayer + 1 (the output layer counts). */
  gpuLayers: number;
  nLayer: number;
  /** What one sequence may use (the context per slot, or the shared pool up to the training context), slots, KV type of the plan. */
  ctx: number;
  /** KV cells in all, and whether the slots share them (no ctx given). */
  pool: number;
  unified: boolean;
  slots: number;
  kvType: KvType;
  marginBytes: number;
  /** The offload devices, in order. */
  devices: FitDeviceUse[];
  host: FitDeviceUse;
  /** What the fitter changed, in words. */
  changes: string[];
  /** does_not_fit: where it does not fit; otherwise a device left with less than the margin, or null. */
  reason: string | null;
  /** When it does not fit, or fits only with layers on the CPU: what would fit with every asked layer offloaded. */
  suggestions: FitSuggestion[];
  /** The fitter's own lines (common/fit.cpp). */
  log: string[];
}

/** What buildGrammar turns into GBNF: named JSON schemas (JSON text) and an optional root rule over them. */
export type GrammarSpec = { schemas: Record<string, string>; root?: string } | { gbnf: string };

export interface CpuVariant {
  /**
   * From libggml-cpu-<name>.so (ggml-cpu-<name>.dll on Windows): "x64", "haswell", "zen4",
   * "armv8.2_2"…; "cpu" for a build with one CPU library instead of variants.
   */
  name: string;
  /** ggml's score for this CPU (higher is better; 0: the CPU lacks instructions it needs). */
  score: number;
  /** Built with AMX kernels. */
  amx: boolean;
}

export interface BackendReport {
  /** The loaded CPU variant; null in a build without variants (STRATA_NATIVE=1). */
  cpuVariant: string | null;
  /** Variants beside the addon, best score first. */
  cpuVariants: CpuVariant[];
  /** Backend registries added ("CPU", "RPC", "Vulkan", "CUDA") and their libraries. */
  loaded: Array<{ name: string; path: string }>;
  /** Backend libraries that did not load, with the loader's reason (e.g. a missing libcudart.so.13). */
  failed: Array<{ path: string; error: string }>;
}

/**
 * What kind of failure a rejected engine call is: the Error's `code` (native/src/engine_error.h).
 * The server maps these to HTTP statuses in one table (backend/validation/engine-errors.ts), never by
 * the message's wording.
 */
export type EngineErrorCode =
  | 'failed' | 'io_error' | 'no_space' | 'session_unreadable' | 'session_model_mismatch'
  | 'conversation_not_found' | 'park_unavailable' | 'engine_closed';

/** Where a save's or a load's time went, ms (0 where a phase does not apply). */
export interface SessionPhases {
  /** Save: copying the sequence's KV out of the context. Load: putting the state into the slot's KV (or the park). */
  stateMs: number;
  /** Load: mapping the file (its pages faulted in at once) and reading its head. */
  readMs: number;
  /** The checksum (XXH3-64). Save: the wait for it once the writes are done (a second thread hashes beside them); load: over the mapped file. */
  hashMs: number;
  /** Save: write() calls into the page cache (write-back started per chunk). */
  writeMs: number;
  /** Save: fdatasync of the file, rename, fsync of the folder. */
  syncMs: number;
}

export interface SessionResult { tokens: number; bytes: number; ms: number; phases: SessionPhases }

/**
 * Where a loaded session's state went: 'slot', straight into an idle slot (the next request with its
 * prefix reuses that slot's KV as it is); 'park', host RAM, while every slot was busy (the next request
 * with its prefix copies it into its slot).
 */
export type SessionInto = 'slot' | 'park';

export interface LoadedSession extends SessionResult {
  /** The tokens the session holds. */
  tokenIds: Int32Array;
  /** The description it was saved with ('' for a version-1 file). */
  meta: string;
  into: SessionInto;
}

/** A piece of a prompt's text; `plain`: a client wrote it, so no special-token parsing inside. */
export interface PromptSegment { text: string; plain?: boolean }

export declare class Engine {
  /** Loads the model and starts the engine thread. Rejects with a clear message on bad options. */
  static load(opts: EngineOptions): Promise<Engine>;
  readonly info: ModelInfo;
  /** Queues a request; throws (TypeError/RangeError) on invalid input, changing nothing. */
  submit(req: GenerateRequest): void;
  /** Queues an embedding request (embedding models only): one 'embedding' event per input, then 'done'. */
  embed(req: EmbedRequest): void;
  /**
   * GBNF for a grammar spec, checked to parse for this vocabulary: JSON schemas go through llama.cpp's
   * json-schema-to-grammar (a schema named "root" is the whole grammar unless `root` is given, whose
   * GBNF may use the schema rules by name). Throws an Error naming what the converter cannot express
   * (also what it would only warn about and then not enforce) or why the GBNF does not parse.
   */
  buildGrammar(spec: GrammarSpec): string;
  /** Cancels a queued or running request; its 'done' event says 'cancel'. Unknown ids are ignored. */
  cancel(id: number): void;
  /** addSpecial (BOS etc. as the vocab wants) defaults to true, parseSpecial to false. */
  tokenize(text: string, addSpecial?: boolean, parseSpecial?: boolean): Int32Array;
  /**
   * The concatenated segments' text tokenized as tokenize(text, addSpecial, true) would, except that
   * a control/unknown token's text overlapping a `plain` segment stays text: the chat template's
   * markup is parsed, what a client wrote never is. No plain segment: tokenize(text, addSpecial, true);
   * all plain: tokenize(text, addSpecial, false). addSpecial defaults to true.
   */
  tokenizeSegments(segments: PromptSegment[], addSpecial?: boolean): Int32Array;
  /**
   * Decodes an image (PNG, JPEG, GIF, BMP) and prepares it with the model's projector, on a worker
   * thread: the tokens it takes in a prompt (the projector's marker tokens around its
   * placeholders). Throws a RangeError when the model has no projector; rejects with one when the
   * bytes are not an image it reads, hold more data than their declared pixels (a decompression
   * bomb), or the image has more than maxPixels pixels (0 or absent: no limit). The last 16 images
   * are kept prepared.
   */
  prepareImage(data: Uint8Array, maxPixels?: number): Promise<PreparedImage>;
  detokenize(tokens: number[] | Int32Array, removeSpecial?: boolean, unparseSpecial?: boolean): string;
  /**
   * Saves the conversation holding the longest prefix of `tokens` (a slot or the park) to `path`
   * (temp file PATH.tmp-PID-N, fdatasync, rename, folder fsync, mode 0600): its state, all the tokens it holds
   * (SessionResult.tokens, which may run past `tokens`) and `meta` (the caller's description,
   * stored as it is). On a recurrent model, of the holders sharing as much, the one holding the
   * fewest tokens past them (a parked shared start: GenerateRequest.sharedPrefix). The KV is copied
   * out between two steps; the file is written on a thread of its own while the steps go on
   * (SessionResult.ms counts both, from when the engine took the command).
   * Rejects (Error with `code`, EngineErrorCode) when nothing holds even the
   * first token ('conversation_not_found') or the file cannot be written ('no_space', 'io_error').
   */
  saveSession(path: string, tokens: number[] | Int32Array, identity: string, meta?: string): Promise<SessionResult>;
  /**
   * Loads a session file so the next request with its prefix starts from it: straight into an idle
   * slot (one whose conversation the session continues, else an empty one, else the least recently
   * used, whose conversation is parked or dropped), or into the park while every slot is busy or
   * wanted by a queued request (`into` says which); a recurrent model also keeps a parked copy, which
   * stays there for every later prompt that starts with all its tokens. Returns the `meta` it was saved with. The file
   * is checked (checksum included) before its state goes anywhere: a refused file changes nothing.
   * Rejects with a clear message and its `code`: not a session file or corrupt (checksum)
   * 'session_unreadable', saved with another model (identity, description, params or vocab differ)
   * or another KV layout (a context per slot, or the one the slots share) 'session_model_mismatch', every slot busy and parking
   * disabled or over budget 'park_unavailable', the file cannot be read 'io_error'.
   */
  loadSession(path: string, identity: string): Promise<LoadedSession>;
  /** The engine thread's state as published after its last step (before that step's events left). */
  snapshot(): EngineSnapshot;
  /** Drains recorded step traces and the records of requests that finished since the last call. */
  traces(): { steps: StepTrace[]; requests: RequestTrace[] };
  devices(): DeviceInfo[];
  /** Stops the thread (pending requests end with 'cancel') and frees the model. */
  close(): Promise<void>;
}

/**
 * All ggml devices of this process, after adding `rpc` servers ("host:port"; each new one is
 * probed first, so an unreachable or busy server throws an Error naming it instead of aborting).
 */
export declare function listDevices(rpc?: string[]): DeviceInfo[];
/**
 * Blocks the calling thread serving ggml RPC on host (an IPv4 address) : port with the GPUs, else
 * the CPU; run it in its own process. Returns only by throwing (e.g. the port is taken).
 */
export declare function rpcServe(host: string, port: number, threads: number): void;
/**
 * tiny, 0.5b, 7b: llama-architecture text models (0.5b and 7b with Qwen2-0.5B's and Qwen2.5-7B's shapes); embed-bert
 * (BERT encoder, mean pooling), embed-causal (decoder, last-token pooling): embedding models; rerank-bert (BERT encoder
 * with a classification head, pooling 'rank', bge-reranker-like: one score per query-document pair); copy, copy-0.5b:
 * hand-set weights whose greedy continuation copies the context (copy-0.5b at Qwen2-0.5B's size and speed).
 */
export type DraftKind = 'model' | 'eagle3' | 'dflash' | 'dspark';

/** N-gram drafters: Strata's prompt lookup, or llama.cpp's ngram-* kinds. */
export type NgramKind = 'lookup' | 'simple' | 'map-k' | 'map-k4v' | 'mod' | 'cache';

export type TestModelShape = 'tiny' | '0.5b' | '7b' | 'embed-bert' | 'embed-causal' | 'rerank-bert' | 'copy' | 'copy-0.5b' | 'mtp' | 'copy-mtp' | 'hybrid' | 'eagle3' | 'dflash' | 'dspark';
export type TestModelQuant = 'f32' | 'f16' | 'q8_0' | 'q4_0';
/**
 * Writes a GGUF of the shape's architecture with seeded random weights and the tokenizer of `vocab` (a
 * tokenizer-only GGUF path), via a temp file renamed into place. Deterministic per arguments and
 * testModelVersion. `std` overrides every weight matrix's std (experiments; default: per-tensor
 * scales that make greedy decoding prompt-sensitive). Bad arguments: TypeError/RangeError.
 */
export declare function makeTestModel(opts: {
  out: string; vocab: string; shape: TestModelShape; quant: TestModelQuant; seed: number; std?: number;
  /**
   * Multiplies the embedding and output scales (default 1: logits' std ~12). 8 gives peaked
   * logits: the top token leads by far more than the rounding differences between backends, so
   * CPU and GPU agree on it (cross-backend checks); continuations still depend on the prompt.
   */
  logitScale?: number;
  /**
   * A model family's added tokens at their ids: each replaces a "[PAD<id>]" placeholder or extends
   * the vocab at its end; another id, or a text already present, is a RangeError.
   */
  addedTokens?: Array<{ id: number; text: string; type: 'control' | 'user' }>;
  /** The pooling type written to the GGUF (default: the shape's; text shapes have none). */
  pooling?: 'mean' | 'cls' | 'last';
  /** Written as tokenizer.chat_template instead of the vocab's own (a family's template for tool-call tests). */
  chatTemplate?: string;
  /** The training context written (`<arch>.context_length`; default: the shape's, 4096 for tiny). */
  ctxTrain?: number;
}): {
  bytes: number; params: number; vocabSize: number;
  /** FIM token ids as llama.cpp reads them from the written file; null when the vocab has none. */
  fim: { prefix: number; suffix: number; middle: number } | null;
};
/**
 * Writes a random-weight vision projector GGUF (libmtmd's "mlp" kind: a small ViT and a two-layer
 * MLP) for the text model at `model` (its output is that model's embedding size), via a temp file
 * renamed into place; deterministic per arguments. Images are resized to imageSize square and take
 * imageTokens positions each. Bad arguments (an unreadable model): RangeError.
 */
export declare function makeTestProjector(opts: { out: string; model: string; seed: number }): {
  bytes: number; imageSize: number; imageTokens: number;
};
/**
 * What Engine.load with `fit: true` would decide now (backends, devices and RPC servers as the load
 * would take them), without loading the weights: the fitter's plan, measured per device, and when it
 * does not fit, what would. `asked`: the asked options measured as they are, no fitting (every asked
 * layer offloaded, an automatic context at fitCtxMin): what the model pool makes room for. Rejects as
 * Engine.load does for a missing or unreadable file.
 */
export declare function fitModel(opts: Omit<EngineOptions, 'onEvents' | 'onFatal'>, how?: { asked?: boolean }): Promise<FitReport>;
/** Generator version: changes whenever makeTestModel writes different bytes for the same arguments. */
export declare const testModelVersion: number;
export declare function systemInfo(): string;
/** ggml's CPU variant libraries beside the addon, scored for this CPU, best first. Loads nothing. */
export declare function cpuVariants(): CpuVariant[];
/**
 * Loads ggml's backends for this process (once: a later call with another variant throws), with
 * the given CPU variant ('auto' = best score) and extra backend folders. listDevices, rpcServe and
 * Engine.load call it with their defaults or options when nothing is loaded yet.
 */
export declare function loadBackends(opts?: { cpuVariant?: string; dirs?: string[] }): BackendReport;
