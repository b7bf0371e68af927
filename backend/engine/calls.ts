// The engine calls: one request from the server, one reply from the engine host (a result or a
// callError with its code). CALL_SPECS is the one table of them: EngineClient's call methods
// (client.ts), the process client's (process-client.ts, callsOver), the wire messages
// (protocol.ts), the host's handlers (host-calls.ts) and the test fake are all typed from it,
// so a new call is one entry here plus its handler in host-calls.ts (the compiler asks for the
// fake's method).
import type {
  DeviceInfo, EngineErrorCode, EngineSnapshot, GrammarSpec, LoadedSession, PromptSegment, RequestTrace, SessionResult, StepTrace,
} from '../../native/lib/addon.js';

/** prepareImage's answer (addon.d.ts PreparedImage, its tokens as an array). */
export interface ImageTokens { id: string; tokens: number[]; at: number; n: number; width: number; height: number }

export interface TokenizePartsOptions { window?: { index: number; budget: number }; addSpecial?: boolean }

/** tokenizeParts' answer: each text's tokens, in order, and the window when one was asked for. */
export interface TokenizedParts { tokens: number[][]; window: number[] | null }

/**
 * One call's types: its arguments as EngineClient's method takes them (a named tuple, sent as
 * it is) and what the host answers. Types only: the table's values are empty objects.
 */
export interface CallSpec<Args extends unknown[], Result> {
  readonly args?: Args;
  readonly result?: Result;
}

function call<Args extends unknown[], Result>(): CallSpec<Args, Result> {
  return {};
}

/** Every engine call (CallSpecs), in the order EngineClient documents them. */
export const CALL_SPECS = {
  /** The Engine's tokenize (addon.d.ts): addSpecial defaults to true, parseSpecial to false. */
  tokenize: call<[text: string, addSpecial?: boolean, parseSpecial?: boolean], number[]>(),
  /** Special tokens parsed in the chat template's segments, never in plain (client) ones (addon.d.ts). */
  tokenizeSegments: call<[segments: PromptSegment[], addSpecial: boolean], number[]>(),
  /**
   * Client texts in one call, special tokens never parsed (and added only with `addSpecial`: the
   * vocabulary's BOS/CLS/SEP, for embedding inputs); with `window` the tokens of texts[index]'s prefix
   * window within `budget` (infill/prefix-window.ts). An infill or embedding request's whole
   * tokenization is one round trip to the engine host.
   */
  tokenizeParts: call<[texts: string[], opts?: TokenizePartsOptions], TokenizedParts>(),
  /**
   * An image prepared by the model's projector (Engine.prepareImage): the tokens it takes in a
   * prompt (placeholders from `at`), its identity and size. Fails for a model without a projector,
   * bytes that are no image it reads, or more than maxPixels pixels.
   */
  prepareImage: call<[data: Uint8Array, maxPixels: number], ImageTokens>(),
  /** Special tokens rendered as their text (templates need bos/eos text). */
  detokenize: call<[tokens: number[]], string>(),
  /** `meta`: the server's description of the session, stored in the file beside the state. */
  saveSession: call<[path: string, tokens: number[], identity: string, meta: string], SessionResult>(),
  /** The addon's LoadedSession, its tokens as an array (`into`: where the state went, a slot or the park). */
  loadSession: call<[path: string, identity: string], Omit<LoadedSession, 'tokenIds'> & { tokenIds: number[] }>(),
  snapshot: call<[], EngineSnapshot>(),
  traces: call<[], { steps: StepTrace[]; requests: RequestTrace[] }>(),
  devices: call<[], DeviceInfo[]>(),
  /** GBNF for JSON schemas (llama.cpp's converter) or a GBNF check, on the engine (see Engine.buildGrammar). */
  buildGrammar: call<[spec: GrammarSpec], string>(),
};

export type CallSpecs = typeof CALL_SPECS;
export type CallName = keyof CallSpecs;
export type CallArgs<K extends CallName> = CallSpecs[K] extends CallSpec<infer Args, unknown> ? Args : never;
export type CallResult<K extends CallName> = CallSpecs[K] extends CallSpec<unknown[], infer Result> ? Result : never;

export const CALL_NAMES = Object.keys(CALL_SPECS) as readonly CallName[];

/** The calls as the server makes them: one method per CallSpecs entry, resolving with its result. */
export type EngineCalls = { readonly [K in CallName]: (...args: CallArgs<K>) => Promise<CallResult<K>> };

/** Sends one call and resolves with its reply (the process client's transport). */
export type CallTransport = <K extends CallName>(name: K, args: CallArgs<K>) => Promise<CallResult<K>>;

/** Every call's method over one transport: a method passes its name and arguments as they are. */
export function callsOver(send: CallTransport): EngineCalls {
  const calls: Record<string, (...args: never[]) => Promise<unknown>> = {};
  for (const name of CALL_NAMES) calls[name] = (...args) => send(name, args as CallArgs<typeof name>);
  return calls as unknown as EngineCalls;
}

/**
 * Every EngineErrorCode (native/src/engine_error.h, addon.d.ts), as a set the compiler checks
 * against the union both ways: a code missing here or unknown there does not compile.
 */
const ENGINE_ERROR_CODE_SET: { readonly [C in EngineErrorCode]: true } = {
  failed: true, io_error: true, no_space: true, session_unreadable: true, session_model_mismatch: true,
  conversation_not_found: true, park_unavailable: true, engine_closed: true,
};

/** The codes a callError may carry (the engine's own; the host says 'failed' for anything else). */
export const ENGINE_ERROR_CODES = Object.keys(ENGINE_ERROR_CODE_SET) as readonly EngineErrorCode[];
