// The coding agents' recorded sessions (test/fixtures/agents/NAME-session.json, requests the real
// clients sent to `strata serve`) and their replay against a server: each request as the client
// sent it, streamed, timed to the first output event, with the prompt tokens and the cached ones
// read from the dialect's own usage fields (Messages: input_tokens + cache_read_input_tokens;
// Responses: input_tokens_details.cached_tokens; chat: prompt_tokens_details.cached_tokens).
// A session longer than the recording grows as the client's does: each later turn appends what
// turn 2 appended to turn 1 (the assistant's call and the tool's result, in the client's format),
// with its own call id and result text. Used by `npm run bench:agents` and by the reuse test.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SseDecoder } from '../../common/net/sse-decoder.js';
import type { Target } from '../../backend/bench/client.js';
import { qualifiedName } from '../../backend/validation/responses-schema.js';

export const AGENT_CLIENTS = ['claude', 'codex', 'opencode', 'continue'] as const;
export type AgentClient = (typeof AGENT_CLIENTS)[number];
export type AgentDialect = 'messages' | 'responses' | 'chat';
// biome-ignore lint/suspicious/noExplicitAny: the clients' and servers' JSON of three dialects, read field by field
export type Json = any;
type Body = Record<string, Json>;

export interface AgentSession {
  client: AgentClient;
  dialect: AgentDialect;
  path: string;
  /** The main requests (those that offer tools), in order: turn 1, turn 2, … as recorded. */
  turns: Body[];
  /** The client's own request without tools beside the first turn (a title, a summary), if it sends one. */
  side: Body | null;
  /** The first request of a second session of the same client. */
  second: Body;
}

const DIALECT: Record<string, AgentDialect> = { '/v1/messages': 'messages', '/v1/responses': 'responses', '/v1/chat/completions': 'chat' };

/** The recorded session of `client` from the fixtures folder under `root`. */
export function loadAgentSession(root: string, client: AgentClient): AgentSession {
  const file = join(root, 'test', 'fixtures', 'agents', `${client}-session.json`);
  const j = JSON.parse(readFileSync(file, 'utf8')) as { session: Array<{ path: string; body: Body }>; secondSession: { path: string; body: Body } };
  const path = j.secondSession.path.split('?')[0]!;
  const dialect = DIALECT[path];
  if (!dialect) throw new Error(`${file}: unknown route ${path}`);
  const tools = (b: Body) => Array.isArray(b.tools) && b.tools.length > 0;
  const turns = j.session.filter((r) => tools(r.body)).map((r) => r.body);
  if (turns.length < 2) throw new Error(`${file}: fewer than 2 turns with tools`);
  return { client, dialect, path, turns, side: j.session.find((r) => !tools(r.body))?.body ?? null, second: j.secondSession.body };
}

/** The conversation items of a request body (messages, or the Responses input list). */
function itemsOf(d: AgentDialect, b: Body): Json[] {
  const items = d === 'responses' ? b.input : b.messages;
  if (!Array.isArray(items)) throw new Error(`a ${d} request without its ${d === 'responses' ? 'input' : 'messages'} list`);
  return items;
}

function withItems(d: AgentDialect, b: Body, items: Json[]): Body {
  return d === 'responses' ? { ...b, input: items } : { ...b, messages: items };
}

/**
 * Turns 1..n of the session: the recorded ones, then each later one with what turn 2 appended to
 * turn 1 appended again (call ids and the result's text made its own per turn).
 */
export function sessionTurns(s: AgentSession, n: number): Body[] {
  const out = s.turns.slice(0, n);
  const [t1, t2] = [itemsOf(s.dialect, s.turns[0]!), itemsOf(s.dialect, s.turns[1]!)];
  const step = t2.slice(t1.length);
  if (step.length === 0) throw new Error(`${s.client}: turn 2 appends nothing to turn 1`);
  const stepText = JSON.stringify(step);
  while (out.length < n) {
    const k = out.length + 1;
    // Ids are values (`"call_id":"call_0"`), never keys.
    const mine = stepText.replace(/:"((?:call|toolu|fc|fco|rs|msg)_[A-Za-z0-9_-]*)"/g, `:"$1_t${k}"`);
    const added = JSON.parse(mine) as Json[];
    varyResult(added, k);
    out.push(withItems(s.dialect, out.at(-1)!, [...itemsOf(s.dialect, out.at(-1)!), ...added]));
  }
  return out;
}

/** The tool result's text in an appended step, made this turn's own (a new file read, not the same one). */
function varyResult(items: Json[], k: number): void {
  const line = `\nturn ${k}: ${Array.from({ length: 24 }, (_, i) => `line${k}x${i}`).join(' ')}`;
  for (const it of items) {
    if (it?.type === 'function_call_output' && typeof it.output === 'string') it.output += line;
    if (it?.role === 'tool' && typeof it.content === 'string') it.content += line;
    for (const b of Array.isArray(it?.content) ? it.content : []) {
      if (b?.type !== 'tool_result') continue;
      if (typeof b.content === 'string') b.content += line;
      else if (Array.isArray(b.content)) b.content.push({ type: 'text', text: line });
    }
  }
}

/** The body with its system prompt opened by `salt` (a fresh prompt for a cold read on every server). */
export function salted(d: AgentDialect, b: Body, salt: string): Body {
  const mark = `[${salt}] `;
  if (d === 'responses') {
    if (typeof b.instructions === 'string' && b.instructions !== '') return { ...b, instructions: mark + b.instructions };
    // Codex sends its system prompt as the first developer message of the input.
    const input = [...b.input];
    const i = input.findIndex((x) => x?.role === 'developer' || x?.role === 'system');
    if (i < 0) return { ...b, instructions: mark };
    const c = input[i].content;
    input[i] = { ...input[i], content: typeof c === 'string' ? mark + c : [{ type: 'input_text', text: mark }, ...c] };
    return { ...b, input };
  }
  if (d === 'messages') {
    if (typeof b.system === 'string') return { ...b, system: mark + b.system };
    const system = Array.isArray(b.system) ? [...b.system] : [];
    // After Claude Code's billing header, which a server may drop: the salt must reach the prompt.
    const i = system.findIndex((x) => x?.type === 'text' && !String(x.text).startsWith('x-anthropic-billing-header:'));
    if (i < 0) system.unshift({ type: 'text', text: mark });
    else system[i] = { ...system[i], text: mark + system[i].text };
    return { ...b, system };
  }
  const messages = [...b.messages];
  const i = messages.findIndex((m) => m.role === 'system' && typeof m.content === 'string');
  if (i < 0) messages.unshift({ role: 'system', content: mark });
  else messages[i] = { ...messages[i], content: mark + messages[i].content };
  return { ...b, messages };
}

/**
 * A Responses body with tools that are all functions, or null when it has no namespace: each
 * namespace's members as top-level functions under their qualified names (as Strata offers them to
 * the model; llama-server drops the namespace), the hosted tools left out (as both servers do). Sent
 * to both servers, it gives them the same tools to read.
 */
export function functionsOnly(d: AgentDialect, b: Body): Body | null {
  if (d !== 'responses' || !Array.isArray(b.tools) || !b.tools.some((t: Json) => t?.type === 'namespace')) return null;
  const tools = b.tools.flatMap((t: Json) => (t?.type === 'function' ? [t]
    : t?.type === 'namespace' ? (t.tools as Json[]).map((m) => ({ ...m, name: qualifiedName(t.name, m.name) })) : []));
  return { ...b, tools };
}

/**
 * The body as the bench sends it: the served model's name, a short greedy answer, a stream with
 * usage, and any extra sampling fields (the ban of tokens that are not valid UTF-8 alone).
 */
export function prepared(d: AgentDialect, b: Body, o: { model: string; maxTokens: number; extra?: Record<string, unknown> }): Body {
  const out: Body = { ...b, model: o.model, stream: true, temperature: 0, ...o.extra };
  if (d === 'responses') out.max_output_tokens = o.maxTokens;
  else out.max_tokens = o.maxTokens;
  if (d === 'chat') out.stream_options = { include_usage: true };
  return out;
}

export interface Replayed {
  status: number;
  /** Send to the first event carrying the answer (text, a call, thinking); NaN when none came. */
  ttftMs: number;
  totalMs: number;
  /** Prompt tokens, all of them (cached included), and those read from the server's cache. */
  prompt: number | null;
  cached: number | null;
  /** An error answer's body, or an error event in the stream. */
  error: string | null;
}

/** Whether an SSE event of the dialect carries the answer's first output. */
function isOutput(d: AgentDialect, ev: Json): boolean {
  if (d === 'messages') return ev?.type === 'content_block_delta';
  if (d === 'responses') return typeof ev?.type === 'string' && ev.type.endsWith('.delta');
  const delta = ev?.choices?.[0]?.delta;
  return typeof delta?.content === 'string' && delta.content !== '' || Array.isArray(delta?.tool_calls) || typeof delta?.reasoning_content === 'string';
}

/** The usage an event reports, in the dialect's own fields, merged into `u`. */
function readUsage(d: AgentDialect, ev: Json, u: { prompt: number | null; cached: number | null }): void {
  if (d === 'messages') {
    const x = ev?.message?.usage ?? ev?.usage;
    if (typeof x?.input_tokens !== 'number') return;
    const cached = typeof x.cache_read_input_tokens === 'number' ? x.cache_read_input_tokens : 0;
    u.prompt = x.input_tokens + cached + (typeof x.cache_creation_input_tokens === 'number' ? x.cache_creation_input_tokens : 0);
    u.cached = cached;
  } else if (d === 'responses') {
    const x = ev?.response?.usage;
    if (typeof x?.input_tokens !== 'number') return;
    u.prompt = x.input_tokens;
    u.cached = x.input_tokens_details?.cached_tokens ?? null;
  } else {
    const x = ev?.usage;
    if (typeof x?.prompt_tokens !== 'number') return;
    u.prompt = x.prompt_tokens;
    u.cached = x.prompt_tokens_details?.cached_tokens ?? null;
  }
}

/** Sends one prepared body and reads its stream to the end. Never throws for an HTTP error (the status says it). */
export async function replay(t: Target, d: AgentDialect, path: string, body: Body, signal?: AbortSignal): Promise<Replayed> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (t.apiKey) { headers.authorization = `Bearer ${t.apiKey}`; headers['x-api-key'] = t.apiKey; }
  const t0 = performance.now();
  const res = await fetch(t.url + path, { method: 'POST', headers, body: JSON.stringify(body), signal: signal ?? AbortSignal.timeout(600_000) });
  const out: Replayed = { status: res.status, ttftMs: Number.NaN, totalMs: Number.NaN, prompt: null, cached: null, error: null };
  if (!res.ok || !res.body) {
    out.error = (await res.text().catch(() => '')).slice(0, 500);
    out.totalMs = performance.now() - t0;
    return out;
  }
  const dec = new SseDecoder();
  const seen = (events: Array<{ data: string }>) => {
    for (const e of events) {
      if (e.data === '[DONE]') continue;
      let ev: Json;
      try { ev = JSON.parse(e.data); } catch { continue; }
      if (Number.isNaN(out.ttftMs) && isOutput(d, ev)) out.ttftMs = performance.now() - t0;
      if (ev?.type === 'error' || ev?.error) out.error ??= JSON.stringify(ev.error ?? ev).slice(0, 500);
      readUsage(d, ev, out);
    }
  };
  const reader = res.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    seen(dec.feed(value));
  }
  seen(dec.end());
  out.totalMs = performance.now() - t0;
  return out;
}
