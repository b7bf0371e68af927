// A scripted EngineClient for model-free unit tests of the scheduler and HTTP layer. Tests
// drive each request by hand (admit, tokens, finish) or let `autoRun` answer it. It keeps
// the real contract: exactly one 'done' per request, engine death ends in-flight requests
// with engineDied, a new epoch on restart. Integration tests use the real engine instead.
import type { ModelInfo } from '../../native/lib/addon.js';
import type { TokenizePartsOptions } from '../../backend/engine/calls.js';
import type {
  EmbedInput, EngineClient, EngineDeath, EngineRequest, EngineStatus, GenerateInput, RequestEvent, RequestSink,
} from '../../backend/engine/client.js';
import { windowPrefix } from '../../backend/infill/prefix-window.js';
import { Channel } from '../../backend/scheduler/channel.js';

type Done = Extract<RequestEvent, { type: 'done' }>;

export class FakeRequest implements EngineRequest {
  readonly events: Channel<RequestEvent> = new Channel();
  readonly done: Promise<Done>;
  cancelled = false;
  finished = false;
  generated = 0;
  text = '';
  private resolveDone!: (d: Done) => void;

  constructor(
    readonly id: number, readonly epoch: number, readonly input: GenerateInput, private readonly owner: FakeEngineClient,
    private readonly sink?: RequestSink,
  ) {
    this.done = new Promise((r) => { this.resolveDone = r; });
  }

  /** As the real client: to the sink when the caller gave one, else buffered for `events`. */
  private emit(ev: RequestEvent): void {
    if (this.sink) this.sink(ev);
    else this.events.push(ev);
  }

  admit(slot = 0, reused = 0): void {
    this.emit({ type: 'admitted', slot, promptTokens: this.input.prompt.length, reused, restored: false });
  }
  progress(read: number): void { this.emit({ type: 'progress', read, total: this.input.prompt.length }); }
  tokens(ids: number[], text: string): void {
    if (this.finished) return;
    this.generated += ids.length;
    this.text += text;
    this.emit({ type: 'tokens', ids, text });
  }
  finish(finish: Done['finish'], extra: Partial<Done> = {}): void {
    if (this.finished) return;
    this.finished = true;
    const d: Done = {
      type: 'done', finish, promptTokens: this.input.prompt.length, reused: 0, promptMs: 5, decodeMs: 10,
      generated: this.generated, text: '', ...extra,
    };
    this.emit(d);
    this.events.close();
    this.owner.release(this);
    this.resolveDone(d);
  }
  cancel(): void {
    if (this.finished) return;
    this.cancelled = true;
    // The engine answers a cancel at its next step.
    queueMicrotask(() => this.finish('cancel'));
  }
}

export interface AutoRun { tokens: number; delayMs?: number; text?: (r: FakeRequest) => string[] }

export interface FakeEngineOptions {
  replica?: number;
  slots?: number;
  ctx?: number;
  /**
   * Answer every request by itself: admit, then `tokens` tokens (text 't<id>.<i> ', or the
   * pieces `text` gives), then 'length' (max_tokens reached) or 'stop'.
   */
  autoRun?: AutoRun | null;
}

export class FakeEngineClient implements EngineClient {
  readonly replica: number;
  private state: EngineStatus['state'] = 'starting';
  private epoch = 1;
  private restarts = 0;
  private lastError: string | null = null;
  private lastDeath: EngineDeath | null = null;
  private nextId = 1;
  private readonly listeners = new Set<(s: EngineStatus) => void>();
  readonly live = new Set<FakeRequest>();
  readonly all: FakeRequest[] = [];
  /** Every embedding request the engine was given (tests read when a request was dispatched). */
  readonly embeds: EmbedInput[] = [];
  info: ModelInfo | null = null;
  autoRun: FakeEngineOptions['autoRun'];
  /** What snapshot() reports as prompt tokens decoded (tests set it). */
  promptComputed = 0;
  /** What snapshot() reports per draft position (tests set it). */
  draftPositions: Array<{ drafted: number; accepted: number }> = [];
  private readonly slots: number;
  private readonly ctx: number;
  /** Called for every new request (tests use it to script answers). */
  onGenerate: ((r: FakeRequest) => void) | null = null;

  constructor(opts: FakeEngineOptions = {}) {
    this.replica = opts.replica ?? 0;
    this.slots = opts.slots ?? 2;
    this.ctx = opts.ctx ?? 256;
    this.autoRun = opts.autoRun ?? null;
  }

  status(): EngineStatus {
    return { replica: this.replica, state: this.state, epoch: this.epoch, pid: 1000 + this.epoch, restarts: this.restarts, lastError: this.lastError, lastDeath: this.lastDeath, staleFrames: 0 };
  }

  async start(): Promise<ModelInfo> {
    this.info = fakeModelInfo(this.slots, this.ctx);
    this.setState('ready');
    return this.info;
  }

  generate(input: GenerateInput, sink?: RequestSink): EngineRequest {
    const r = new FakeRequest(this.nextId++, this.epoch, input, this, sink);
    this.all.push(r);
    if (this.state !== 'ready') {
      queueMicrotask(() => r.finish('error', { error: 'engine is not running', engineDied: true, promptMs: null, decodeMs: null }));
      return r;
    }
    this.live.add(r);
    this.onGenerate?.(r);
    if (this.autoRun) void this.run(r, this.autoRun);
    return r;
  }

  private async run(r: FakeRequest, auto: AutoRun): Promise<void> {
    const delayMs = auto.delayMs ?? 0;
    await tick(delayMs);
    if (r.finished) return;
    r.admit(this.live.size - 1);
    const pieces = auto.text ? auto.text(r) : Array.from({ length: auto.tokens }, (_, i) => `t${r.id}.${i} `);
    const n = Math.min(pieces.length, r.input.maxTokens);
    for (let i = 0; i < n && !r.finished; i++) {
      await tick(delayMs);
      r.tokens([100 + (i % 100)], pieces[i]!);
    }
    await tick(delayMs);
    r.finish(n >= r.input.maxTokens ? 'length' : 'stop');
  }

  release(r: FakeRequest): void { this.live.delete(r); }

  /** The engine process dies: in-flight requests end with engineDied; state 'dead'. */
  die(reason = 'killed'): void {
    this.lastError = reason;
    this.lastDeath = {
      epoch: this.epoch, pid: 1000 + this.epoch, signal: 'SIGKILL', exitCode: null, lastError: reason,
      deathsInRow: 1, gaveUp: false, model: 'fake', devices: [], at: Date.now(),
    };
    for (const r of [...this.live]) r.finish('error', { error: `engine died: ${reason}`, engineDied: true, promptMs: null, decodeMs: null });
    this.setState('dead');
  }

  /** A restart with a new epoch. */
  restart(): void {
    this.epoch++;
    this.restarts++;
    this.setState('starting');
    this.setState('ready');
  }

  /** The fake serves text only: an embedding request ends at once with the engine's refusal. */
  embed(input: EmbedInput): EngineRequest {
    this.embeds.push(input);
    const r = new FakeRequest(this.nextId++, this.epoch, { prompt: input.inputs.flat(), maxTokens: 0 }, this);
    queueMicrotask(() => r.finish('error', { error: 'this model makes text, not embeddings', promptMs: null, decodeMs: null }));
    return r;
  }
  async buildGrammar(): Promise<never> { throw new Error('not supported by the fake engine'); }
  /** The fake reads text only (a model without a projector). */
  async prepareImage(): Promise<never> { throw new Error('this model was loaded without a projector (mmproj): it reads text only'); }

  async tokenize(text: string): Promise<number[]> { return [...Buffer.from(text)]; }
  /** One token per byte, as tokenize: the fake has no special tokens to parse. */
  async tokenizeSegments(segments: Array<{ text: string }>): Promise<number[]> { return this.tokenize(segments.map((s) => s.text).join('')); }
  async tokenizeParts(texts: string[], { window }: TokenizePartsOptions = {}): Promise<{ tokens: number[][]; window: number[] | null }> {
    const tokens = await Promise.all(texts.map((t) => this.tokenize(t)));
    return { tokens, window: window ? await windowPrefix(texts[window.index] ?? '', tokens[window.index] ?? [], window.budget, (s) => this.tokenize(s)) : null };
  }
  async detokenize(tokens: number[]): Promise<string> { return Buffer.from(tokens).toString(); }
  async saveSession(): Promise<never> { throw new Error('not supported by the fake engine'); }
  async loadSession(): Promise<never> { throw new Error('not supported by the fake engine'); }
  async snapshot() {
    return {
      slots: [], queued: 0,
      park: { entries: [], bytes: 0, budget: 0, hits: 0, misses: 0, evictions: 0, refusedLowRam: 0 },
      totals: {
        promptTokens: 0, reusedTokens: 0, promptComputed: this.promptComputed, generated: 0, steps: 0, requests: 0,
        drafted: 0, accepted: 0, embedded: 0, draftPositions: this.draftPositions,
      },
    };
  }
  async traces() { return { steps: [], requests: [] }; }
  async devices() { return []; }

  onStatus(listener: (s: EngineStatus) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async close(): Promise<void> {
    for (const r of [...this.live]) r.finish('cancel');
    this.setState('closed');
  }

  private setState(s: EngineStatus['state']): void {
    this.state = s;
    const st = this.status();
    for (const l of this.listeners) l(st);
  }
}

function tick(ms: number): Promise<void> {
  return ms > 0 ? new Promise((r) => setTimeout(r, ms)) : new Promise((r) => setImmediate(r));
}

export function fakeModelInfo(slots: number, ctx: number): ModelInfo {
  return {
    description: 'fake 1M', architecture: 'llama', params: 1_000_000, sizeBytes: 4_000_000, trainCtx: 4096, ctx, ctxPool: ctx * slots, kvUnified: false, recurrent: false, slots,
    vocabSize: 256, bos: 1, eos: 2, eot: 2, fim: null, chatTemplate: null, mmproj: null, controlTexts: [], metadata: { 'general.name': 'fake' },
    placement: [{ device: 'CPU', layers: 2, memoryFree: 0, memoryTotal: 0 }], kvType: 'f16', batch: 512, decodePromptBudget: 64, admitWindowMs: 8, flashAttn: false,
    cpu: { variant: 'haswell', repack: true, deterministic: 0 }, backends: { cpuVariant: 'haswell', cpuVariants: [], loaded: [], failed: [] },
    opOffload: true, buffers: [{ kind: 'kv', buffer: 'CPU', mib: 1 }],
    embedding: null, rerank: null, speculative: { ngram: false, ngramKind: null, mtp: false, draftModel: null, draftKind: null, draftMax: 0 }, fit: null,
  };
}
