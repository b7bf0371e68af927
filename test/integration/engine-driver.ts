// Drives the native Engine directly (no engine host process) for the engine-*.test.ts files:
// collects every event per request and lets a test react to events as they arrive, so
// schedules (cancel mid-prompt, a request arriving while another decodes) are forced by the
// engine's own events instead of sleeps.
import type { Engine, EngineEvent, EngineOptions, GenerateRequest } from '../../native/lib/addon.js';
import { loadAddon } from '../../backend/addon/loader.js';

export type Done = Extract<EngineEvent, { type: 'done' }>;
export type Admitted = Extract<EngineEvent, { type: 'admitted' }>;

export interface RunResult {
  events: EngineEvent[];
  admitted: Admitted | undefined;
  ids: number[];
  text: string;
  done: Done;
  /** Every 'done' event this request got (exactly one is the invariant). */
  dones: Done[];
}

type Listener = (e: EngineEvent) => void;

const WAIT_MS = 60_000;

export class EngineDriver {
  readonly all: EngineEvent[] = [];
  // Events of each id's current incarnation; moved to `ended` at its 'done' (ids are reusable).
  private readonly perRequest = new Map<number, EngineEvent[]>();
  private readonly ended = new Map<number, EngineEvent[]>();
  private readonly finished = new Map<number, (r: RunResult) => void>();
  private readonly listeners = new Set<Listener>();
  private nextId = 1;
  /** Set once the engine is loaded; events cannot arrive before that. */
  engine!: Engine;
  /** Each onEvents call's batch, to check batching per step. */
  readonly batches: EngineEvent[][] = [];
  /** How long a request may take before run() rejects (grammar-heavy files raise it). */
  waitMs = WAIT_MS;

  static async load(opts: Omit<EngineOptions, 'onEvents'>): Promise<EngineDriver> {
    const d = new EngineDriver();
    d.engine = await loadAddon().Engine.load({ ...opts, onEvents: (evs) => d.onEvents(evs) });
    return d;
  }

  private onEvents(evs: EngineEvent[]): void {
    this.batches.push(evs);
    for (const e of evs) {
      this.all.push(e);
      const list = this.perRequest.get(e.id) ?? [];
      list.push(e);
      this.perRequest.set(e.id, list);
      for (const l of [...this.listeners]) l(e);
      if (e.type === 'done') {
        this.ended.set(e.id, list);
        this.perRequest.delete(e.id);
        const resolve = this.finished.get(e.id);
        this.finished.delete(e.id);
        resolve?.(this.result(e.id));
      }
    }
  }

  id(): number {
    return this.nextId++;
  }

  /** Submits and resolves when the request's 'done' arrives. */
  start(req: Omit<GenerateRequest, 'id'> & { id?: number }): { id: number; done: Promise<RunResult> } {
    const id = req.id ?? this.id();
    const done = new Promise<RunResult>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`request ${id} did not finish within ${this.waitMs} ms`)), this.waitMs);
      this.finished.set(id, (r) => { clearTimeout(timer); resolve(r); });
    });
    this.engine.submit({ ...req, id });
    return { id, done };
  }

  run(req: Omit<GenerateRequest, 'id'> & { id?: number }): Promise<RunResult> {
    return this.start(req).done;
  }

  /** The engine steps that emitted tokens of request `id` (each step is one onEvents batch). */
  stepsOf(id: number): number {
    return this.batches.filter((b) => b.some((e) => e.type === 'tokens' && e.id === id)).length;
  }

  /** Calls `fn` for every later event until it returns true (once). */
  when(pred: (e: EngineEvent) => boolean, fn: (e: EngineEvent) => void): void {
    const l: Listener = (e) => {
      if (pred(e)) { this.listeners.delete(l); fn(e); }
    };
    this.listeners.add(l);
  }

  /** Resolves with the first later event matching `pred`. */
  next(pred: (e: EngineEvent) => boolean, what: string): Promise<EngineEvent> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), WAIT_MS);
      this.when(pred, (e) => { clearTimeout(timer); resolve(e); });
    });
  }

  /** The events of `id`'s current incarnation, or of its last finished one. */
  eventsOf(id: number): EngineEvent[] {
    return this.perRequest.get(id) ?? this.ended.get(id) ?? [];
  }

  result(id: number): RunResult {
    const events = this.eventsOf(id);
    const dones = events.filter((e): e is Done => e.type === 'done');
    const admitted = events.find((e): e is Admitted => e.type === 'admitted');
    let text = '';
    const ids: number[] = [];
    for (const e of events) {
      if (e.type === 'tokens') { text += e.text; ids.push(...e.ids); }
      if (e.type === 'done') text += e.text;
    }
    const done = dones[0];
    if (!done) throw new Error(`request ${id} has no done event`);
    return { events, admitted, ids, text, done, dones };
  }

  tokens(text: string): number[] {
    return Array.from(this.engine.tokenize(text, false, false));
  }

  async close(): Promise<void> {
    await this.engine.close();
  }
}

/** Distinct prompts of a given rough length (tokens), so each conversation is its own. */
/** Loads an engine, runs `fn` with it, and closes it whatever `fn` does. */
export async function withEngine<T>(opts: Parameters<typeof EngineDriver.load>[0], fn: (e: EngineDriver) => Promise<T>): Promise<T> {
  const eng = await EngineDriver.load(opts);
  try { return await fn(eng); } finally { await eng.close(); }
}

/** `n` lines of repetitive code (`  total0 = merge(items, 0) + offset;`, ...): text the copy models
 *  continue, and n-gram drafts match, from their own earlier lines. */
export function codeLines(n: number, name = 'total'): string[] {
  return Array.from({ length: n }, (_, i) => `  ${name}${i} = merge(items, ${i * 7}) + offset;`);
}

export function promptText(tag: string, words = 24): string {
  const vocab = ['river', 'stone', 'lamp', 'orchard', 'signal', 'copper', 'meadow', 'harbor', 'violet', 'engine',
    'winter', 'ladder', 'compass', 'thread', 'lantern', 'garden', 'falcon', 'marble', 'canvas', 'summit'];
  let seed = 0;
  for (const ch of tag) seed = (seed * 31 + ch.charCodeAt(0)) >>> 0;
  const out = [tag];
  for (let i = 0; i < words; i++) {
    seed = (seed * 1103515245 + 12345) >>> 0;
    out.push(vocab[seed % vocab.length]!);
  }
  return out.join(' ');
}

export interface LongReadRun {
  decoder: { id: number };
  long: RunResult;
  short: RunResult;
  /** Step and request records from the decoder's first token on. */
  traces: ReturnType<Engine['traces']>;
}

/**
 * The schedule the step-plan tests force: a decoder decoding, then a long prompt, then a short
 * prompt arriving once the long read has begun (its first progress event). Ends the decoder once
 * the long request is done and returns everything with the engine's trace records.
 */
export async function longReadBesideDecoder(eng: EngineDriver, longPrompt: number[], shortPrompt: number[]): Promise<LongReadRun> {
  const decoder = eng.start({ prompt: eng.tokens(promptText('decoder', 8)), maxTokens: 100_000, ignoreEos: true });
  await eng.next((e) => e.type === 'tokens' && e.id === decoder.id, 'the decoder decoding');
  eng.engine.traces();  // drop earlier records
  const long = eng.start({ prompt: longPrompt, maxTokens: 2, ignoreEos: true });
  let short: { id: number; done: Promise<RunResult> } | undefined;
  eng.when((e) => e.type === 'progress' && e.id === long.id, () => {
    short = eng.start({ prompt: shortPrompt, maxTokens: 2, ignoreEos: true });
  });
  const longRun = await long.done;
  eng.engine.cancel(decoder.id);
  await decoder.done;
  if (!short) throw new Error('the short request never started (no progress event from the long one)');
  const shortRun = await short.done;
  return { decoder, long: longRun, short: shortRun, traces: eng.engine.traces() };
}
