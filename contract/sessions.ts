// The /v1/sessions API: the server's JSON (backend/sessions/ builds it), its runtime check, and
// what the panel, the commands and @strata show (SessionInfo, RestoredSession). Names follow the
// one rule in session-name.ts.
import * as z from 'zod/mini';
import type { SessionInto } from '../native/lib/addon.js';
import type { ChatMessage } from './chat.js';
import { checkBody } from './check.js';

// --- the server's JSON ---------------------------------------------------------------------

/** An OpenAI chat message as stored: its role and content are read back; the rest is kept as sent. */
export interface StoredMessage { role: string; content: unknown }

export interface SessionModel {
  /** What the engine checks: sessions only load into the same model and KV layout. */
  identity: string;
  /** For people: the model's name and file. */
  name: string;
  file: string;
}

/** What the server stores in a session file beside the state (JSON). */
export interface SessionDescription {
  model: SessionModel;
  /** ISO time of the save. */
  created: string;
  /**
   * The OpenAI chat messages the session was saved from, as the client sent them (POST
   * /v1/sessions validates them); null when saved from prompt text or by format 1.
   */
  messages: StoredMessage[] | null;
}

/** A session as the API shows it. */
export interface SessionMeta extends SessionDescription {
  name: string;
  tokens: number;
  /** Size of the session file. */
  bytes: number;
  message_count: number;
  /** 2 (one file) or 1 (state file + NAME.json sidecar, from older versions). */
  format: 1 | 2;
}

/**
 * Where a save's or a restore's time went, ms: the server's own steps, the engine call as a
 * whole (IPC both ways + waiting for the step boundary + the file work), and the engine's
 * file work by phase (native SessionPhases).
 */
export interface SessionTimings {
  total_ms: number;
  /** Save: rendering the messages and tokenizing them (an engine call). */
  prompt_ms?: number;
  engine_ms: number;
  engine: { state_ms: number; read_ms: number; hash_ms: number; write_ms: number; sync_ms: number; file_ms: number };
}

export interface SavedSession extends SessionMeta { save_ms: number; timings: SessionTimings }

export interface RestoreResult {
  name: string;
  tokens: number;
  bytes: number;
  ms: number;
  replica: number;
  /**
   * Where the engine put the state: 'slot', straight into an idle slot (the next request with this
   * prefix reuses its KV as it is), or 'park' (host RAM) while every slot was busy; 'none' when the
   * state was saved with the other context layout (a context per slot and the shared one hold KV
   * differently): the conversation comes back, and the next request reads it afresh.
   */
  into: SessionInto | 'none';
  /** The OpenAI messages the session was saved with; null when it was saved without them. */
  messages: StoredMessage[] | null;
  timings: SessionTimings;
}

/** GET /v1/sessions: every session; one whose file cannot be read is listed with its error (it can still be deleted). */
export interface SessionListBody { object: 'list'; data: Array<SessionMeta | { name: string; error: string }> }

// --- its runtime check ---------------------------------------------------------------------

const num = z.number();
const storedMessage: z.ZodMiniType<StoredMessage> = z.looseObject({ role: z.string(), content: z.unknown() });
const sessionMeta: z.ZodMiniType<SessionMeta> = z.object({
  name: z.string(),
  model: z.object({ identity: z.string(), name: z.string(), file: z.string() }),
  created: z.string(),
  messages: z.nullable(z.array(storedMessage)),
  tokens: num,
  bytes: num,
  message_count: num,
  format: z.union([z.literal(1), z.literal(2)]),
});
const timings: z.ZodMiniType<SessionTimings> = z.object({
  total_ms: num, prompt_ms: z.optional(num), engine_ms: num,
  engine: z.object({ state_ms: num, read_ms: num, hash_ms: num, write_ms: num, sync_ms: num, file_ms: num }),
});

export const sessionListSchema: z.ZodMiniType<SessionListBody> = z.object({
  object: z.literal('list'),
  data: z.array(z.union([sessionMeta, z.object({ name: z.string(), error: z.string() })])),
});
export const savedSessionSchema: z.ZodMiniType<SavedSession> = z.intersection(sessionMeta, z.object({ save_ms: num, timings }));
export const restoreResultSchema: z.ZodMiniType<RestoreResult> = z.object({
  name: z.string(), tokens: num, bytes: num, ms: num, replica: num, into: z.enum(['slot', 'park', 'none']),
  messages: z.nullable(z.array(storedMessage)), timings,
});

// --- what the panel shows ------------------------------------------------------------------

export interface SessionInfo {
  name: string;
  tokens: number | null;
  bytes: number | null;
  model: string | null;
  savedAt: number | null;
  path: string | null;
  messages: number | null;
}

export interface RestoredSession {
  name: string;
  /** The conversation, when the server returns it (it needs it to continue the chat). */
  messages: ChatMessage[] | null;
  tokens: number | null;
}

export function sessionInfoView(s: SessionMeta | { name: string; error: string }): SessionInfo {
  if (!('model' in s)) return { name: s.name, tokens: null, bytes: null, model: null, savedAt: null, path: null, messages: null };
  const saved = Date.parse(s.created);
  return {
    name: s.name, tokens: s.tokens, bytes: s.bytes, model: s.model.name, savedAt: Number.isFinite(saved) ? saved : null,
    path: null, messages: s.messages === null ? null : s.messages.length,
  };
}

/** The messages a chat can continue with: system, user, assistant and tool turns with text content. */
export function chatMessagesOf(stored: StoredMessage[] | null): ChatMessage[] | null {
  if (stored === null) return null;
  const out: ChatMessage[] = [];
  for (const m of stored) {
    if (m.role !== 'system' && m.role !== 'user' && m.role !== 'assistant' && m.role !== 'tool') continue;
    out.push({ role: m.role, content: typeof m.content === 'string' ? m.content : '' });
  }
  return out;
}

export function parseSessions(raw: unknown): SessionInfo[] {
  return checkBody(sessionListSchema, raw, 'GET /v1/sessions').data.map(sessionInfoView);
}

export function parseSavedSession(raw: unknown): SessionInfo {
  return sessionInfoView(checkBody(savedSessionSchema, raw, 'POST /v1/sessions'));
}

export function parseRestored(raw: unknown): RestoredSession {
  const r = checkBody(restoreResultSchema, raw, 'POST /v1/sessions/{name}/restore');
  return { name: r.name, messages: chatMessagesOf(r.messages), tokens: r.tokens };
}
