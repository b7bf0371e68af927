// The messages between the engine client (server process) and the engine host (child process).
//
// Transport: Node's IPC channel of child_process.fork with serialization 'advanced'. It is
// framed (one structured-clone payload per message, typed arrays included), ordered, and
// separate from the child's stdout/stderr, which carry only logs. A length-prefixed pipe of
// our own would add nothing: the channel already frames, and it closes when either side dies,
// which is how each side learns that the other is gone.
//
// Every message carries the engine epoch (1 for the first process a client starts, +1 for
// each start); request-scoped messages carry the engine-level request id, call replies the
// call id. The receiver drops what is not addressed to its epoch.
import type { EngineErrorCode, EngineEvent, ModelInfo } from '../../native/lib/addon.js';
import { CALL_NAMES, ENGINE_ERROR_CODES, type CallArgs, type CallName } from './calls.js';
import type { EmbedInput, EngineConfig, GenerateInput } from './client.js';

/** One call of CALL_SPECS (calls.ts): its arguments as the method took them. The reply: `result` or `callError`, same call id. */
export type CallCommand = { [K in CallName]: CallCommandOf<K> }[CallName];
export interface CallCommandOf<K extends CallName> { kind: K; epoch: number; call: number; args: CallArgs<K> }

/** Server -> engine host. */
export type Command =
  /** The handshake: load the model; the host answers `ready` or `loadError`. */
  | { kind: 'init'; epoch: number; config: EngineConfig }
  | { kind: 'submit'; epoch: number; id: number; request: GenerateInput }
  /** An embedding request: answered like a submit (events, or submitError). */
  | { kind: 'embed'; epoch: number; id: number; request: EmbedInput }
  | { kind: 'cancel'; epoch: number; id: number }
  | CallCommand
  /** Stop the engine (pending requests end with 'cancel') and exit. */
  | { kind: 'close'; epoch: number };

/** Engine host -> server. */
export type HostMessage =
  | { kind: 'ready'; epoch: number; pid: number; info: ModelInfo }
  | { kind: 'loadError'; epoch: number; error: string }
  /**
   * One engine step's events, for all its sequences, in order. handedAtMs: when the engine
   * thread handed the step over (monotonic ms, see EngineOptions.onEvents); absent from hosts
   * that do not stamp.
   */
  | { kind: 'events'; epoch: number; events: EngineEvent[]; handedAtMs?: number }
  /** The engine refused a submit (bad input); the request never started. */
  | { kind: 'submitError'; epoch: number; id: number; error: string }
  | { kind: 'result'; epoch: number; call: number; value: unknown }
  /** `code`: what kind of failure (ENGINE_ERROR_CODES); the server's status follows it, never the message. */
  | { kind: 'callError'; epoch: number; call: number; error: string; code: EngineErrorCode }
  /** The host is about to exit because of an error it could not handle. */
  | { kind: 'fatal'; epoch: number; error: string };

export class ProtocolError extends Error {
  override name = 'ProtocolError';
}

type Obj = Record<string, unknown>;

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
function isPosInt(v: unknown): v is number {
  return typeof v === 'number' && Number.isSafeInteger(v) && v > 0;
}
function need(cond: boolean, what: string): void {
  if (!cond) throw new ProtocolError(what);
}
function needPosInt(m: Obj, key: string, kind: string): void {
  need(isPosInt(m[key]), `${kind} message: '${key}' must be a positive integer, got ${JSON.stringify(m[key])}`);
}
function needString(m: Obj, key: string, kind: string): void {
  need(typeof m[key] === 'string', `${kind} message: '${key}' must be a string`);
}
function needKind(raw: unknown, kinds: readonly string[], side: string): Obj & { kind: string } {
  need(isObj(raw), `${side} message must be an object`);
  const m = raw as Obj;
  need(typeof m.kind === 'string' && kinds.includes(m.kind), `${side} message has unknown kind ${JSON.stringify(m.kind)}`);
  needPosInt(m, 'epoch', m.kind as string);
  return m as Obj & { kind: string };
}

/**
 * What is wrong with a submit's request fields, or null. Not part of parseCommand: a submit whose
 * request is refused must still be answered (submitError) for its id, never dropped. The engine
 * checks ids against its vocabulary.
 */
export function submitRequestProblem(request: Record<string, unknown>): string | null {
  const rt = request.renderTokens;
  if (rt !== undefined && !(Array.isArray(rt) && rt.every((t) => typeof t === 'number' && Number.isSafeInteger(t) && t >= 0))) {
    return `submit request: 'renderTokens' must be an array of non-negative integer token ids, got ${String(JSON.stringify(rt)).slice(0, 80)}`;
  }
  return null;
}

const EVENT_TYPES = ['admitted', 'progress', 'tokens', 'embedding', 'done'];
const HOST_KINDS = ['ready', 'loadError', 'events', 'submitError', 'result', 'callError', 'fatal'];
const COMMAND_KINDS = ['init', 'submit', 'embed', 'cancel', 'close', ...CALL_NAMES];

/** Checks a message from the engine host; throws a ProtocolError that names the problem. */
export function parseHostMessage(raw: unknown): HostMessage {
  const m = needKind(raw, HOST_KINDS, 'engine host');
  switch (m.kind) {
    case 'ready':
      needPosInt(m, 'pid', m.kind);
      need(isObj(m.info), 'ready message: \'info\' must be an object');
      break;
    case 'loadError': case 'fatal':
      needString(m, 'error', m.kind);
      break;
    case 'events':
      need(Array.isArray(m.events), 'events message: \'events\' must be an array');
      need(m.handedAtMs === undefined || (typeof m.handedAtMs === 'number' && Number.isFinite(m.handedAtMs) && m.handedAtMs >= 0),
        `events message: 'handedAtMs' must be a non-negative number of ms, got ${JSON.stringify(m.handedAtMs)}`);
      for (const ev of m.events as unknown[]) {
        need(isObj(ev) && EVENT_TYPES.includes(ev.type as string), `events message: bad event type ${JSON.stringify(isObj(ev) ? ev.type : ev)}`);
        need(isPosInt((ev as Obj).id), `events message: event id must be a positive integer, got ${JSON.stringify((ev as Obj).id)}`);
      }
      break;
    case 'submitError':
      needPosInt(m, 'id', m.kind);
      needString(m, 'error', m.kind);
      break;
    case 'result':
      needPosInt(m, 'call', m.kind);
      break;
    case 'callError':
      needPosInt(m, 'call', m.kind);
      needString(m, 'error', m.kind);
      need(ENGINE_ERROR_CODES.includes(m.code as EngineErrorCode), `callError message: 'code' must be one of ${ENGINE_ERROR_CODES.join(', ')}, got ${JSON.stringify(m.code)}`);
      break;
  }
  return m as unknown as HostMessage;
}

/** Checks a command from the server; throws a ProtocolError that names the problem. */
export function parseCommand(raw: unknown): Command {
  const m = needKind(raw, COMMAND_KINDS, 'server');
  switch (m.kind) {
    case 'init':
      need(isObj(m.config) && typeof m.config.model === 'string', 'init message: \'config.model\' must be a string');
      break;
    case 'submit': case 'embed':
      needPosInt(m, 'id', m.kind);
      need(isObj(m.request), `${m.kind} message: 'request' must be an object`);
      break;
    case 'cancel':
      needPosInt(m, 'id', m.kind);
      break;
    case 'close':
      break;
    default:
      needPosInt(m, 'call', m.kind);
      need(Array.isArray(m.args), `${m.kind} message: 'args' must be an array`);
  }
  return m as unknown as Command;
}
