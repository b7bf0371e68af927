// The engine host's side of every engine call (CALL_SPECS, calls.ts): one handler per entry,
// on the loaded Engine. The mapped type makes a missing or mistyped handler a compile error.
import type { Engine } from '../../native/lib/addon.js';
import { windowPrefix } from '../infill/prefix-window.js';
import type { CallArgs, CallName, CallResult } from './calls.js';
import type { CallCommandOf } from './protocol.js';

export type CallHandlers = {
  readonly [K in CallName]: (engine: Engine, ...args: CallArgs<K>) => CallResult<K> | Promise<CallResult<K>>;
};

export const CALL_HANDLERS: CallHandlers = {
  tokenize: (e, text, addSpecial, parseSpecial) => Array.from(e.tokenize(text, addSpecial, parseSpecial)),
  tokenizeSegments: (e, segments, addSpecial) => Array.from(e.tokenizeSegments(segments, addSpecial)),
  tokenizeParts: async (e, texts, opts = {}) => {
    const plain = (s: string): number[] => (s === '' ? [] : Array.from(e.tokenize(s, false, false)));
    const tokens = opts.addSpecial ? texts.map((s) => Array.from(e.tokenize(s, true, false))) : texts.map(plain);
    const w = opts.window;
    const window = w ? await windowPrefix(texts[w.index] ?? '', tokens[w.index] ?? [], w.budget, plain) : null;
    return { tokens, window };
  },
  prepareImage: async (e, data, maxPixels) => {
    const r = await e.prepareImage(data, maxPixels);
    return { ...r, tokens: Array.from(r.tokens) };
  },
  // Special tokens as their text (like llama-server): templates need bos/eos text.
  detokenize: (e, tokens) => e.detokenize(tokens, false, true),
  saveSession: (e, path, tokens, identity, meta) => e.saveSession(path, tokens, identity, meta),
  loadSession: async (e, path, identity) => {
    const r = await e.loadSession(path, identity);
    return { ...r, tokenIds: Array.from(r.tokenIds) };
  },
  snapshot: (e) => e.snapshot(),
  traces: (e) => e.traces(),
  devices: (e) => e.devices(),
  buildGrammar: (e, spec) => e.buildGrammar(spec),
};

/** Runs one call on the engine; a handler that throws rejects (the host answers callError). */
export async function runCall<K extends CallName>(engine: Engine, cmd: CallCommandOf<K>): Promise<CallResult<K>> {
  const handler: CallHandlers[K] = CALL_HANDLERS[cmd.kind];
  return handler(engine, ...cmd.args);
}
