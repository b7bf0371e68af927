// The prefix cache around a chat turn (http/chat-turn/run.ts): before a request is submitted, when
// no replica probably holds as much of its prompt as a cached file gives, the file sharing the
// longest prefix with it is loaded into an idle slot (or the park), so the engine's own prefix reuse
// takes it from there; after the answer, a long prompt that no file covers yet has its KV written
// (in the background, from the slot or the park that holds it) to the cache's folder
// (prefix-store.ts). On a recurrent model, whose state cannot be cut back, a file serves only prompts
// that start with all its tokens, so what is saved is the prompt's shared start (its system messages
// and tools: http/chat-turn/shared-start.ts), which the engine parked while reading past it.
// A failure only costs time: the prompt is read afresh, and the log says so once.
import { EngineCallError } from '../engine/client.js';
import type { Logger } from '../log/logger.js';
import type { Scheduler } from '../scheduler/scheduler.js';
import type { ModelView } from '../served-model/model-view.js';
import { FIRST_BLOCK, PrefixStore } from './prefix-store.js';

/** A prompt this long or longer has its KV saved. */
export const MIN_SAVE_TOKENS = 1024;
/** A file is loaded only when it gives at least this many tokens of the prompt. */
export const MIN_LOAD_TOKENS = 512;
/** A prompt whose tokens a file already holds this share of is not saved again. */
export const COVERED = 0.9;

/** What the hooks use of a route's context (http/app-context.ts has them all). */
export interface PrefixDeps {
  readonly scheduler: Scheduler;
  readonly log: Logger;
  /** null: no prefix cache (--prefix-cache-mib 0). */
  readonly prefixes: PrefixStore | null;
}

/** Whether the cache takes this prompt at all: text only (image placeholders are the request's own). */
function cacheable(deps: PrefixDeps, prompt: number[], images: number, least: number): deps is PrefixDeps & { prefixes: PrefixStore } {
  return deps.prefixes?.enabled === true && images === 0 && prompt.length >= Math.max(least, FIRST_BLOCK) && !prompt.some((t) => t < 0);
}

function failure(e: unknown): { code: string; error: string } {
  return { code: e instanceof EngineCallError ? e.code : 'failed', error: (e as Error | null)?.message ?? String(e) };
}

/**
 * Before a request is submitted: loads the cached file that gives the most of `prompt` when no
 * replica probably holds as many whole blocks of it. Never throws.
 */
export async function loadCachedPrefix(deps: PrefixDeps, model: ModelView, prompt: number[], images: number): Promise<void> {
  if (!cacheable(deps, prompt, images, MIN_LOAD_TOKENS)) return;
  const store = deps.prefixes;
  try {
    const held = deps.scheduler.cachedPrefix(prompt);
    if (held.tokens + held.block > prompt.length) return;
    const identity = model.session.identity;
    const best = await store.best(identity, prompt, model.info.recurrent);
    if (!best || best.common < MIN_LOAD_TOKENS || Math.floor(best.common / held.block) * held.block <= held.tokens) return;
    // Another request is loading this file: the prefix is on its way.
    const inFlight = store.loading.get(best.name);
    if (inFlight) { await inFlight; return; }
    const work = loadInto(deps, store, model, best.name, best.path);
    store.loading.set(best.name, work);
    try { await work; } finally { store.loading.delete(best.name); }
  } catch (e) {
    if (store.firstTime('lookup')) deps.log.warn('prefix cache: lookup failed; the prompt is read afresh', failure(e));
  }
}

async function loadInto(deps: PrefixDeps, store: PrefixStore, model: ModelView, name: string, path: string): Promise<void> {
  const client = deps.scheduler.anyReadyClient();
  if (!client) return;
  try {
    const res = await client.loadSession(path, model.session.identity);
    deps.scheduler.noteCached(client.replica, Array.from(res.tokenIds));
    await store.used(name);
    deps.log.info('prefix cache: loaded', { file: name, replica: client.replica, into: res.into, tokens: res.tokens, ms: Math.round(res.ms) });
  } catch (e) {
    const f = failure(e);
    // A file no engine of this model can read goes; the others (no idle slot, a context too small) stay.
    if (f.code === 'session_unreadable' || f.code === 'session_model_mismatch') await store.drop(name);
    if (store.firstTime(`load:${f.code}`)) deps.log.warn('prefix cache: a cached prefix was not loaded; the prompt is read afresh', { file: name, ...f });
  }
}

/**
 * After a turn's answer: when its prompt is long and no cached file holds most of it, writes the
 * KV of its tokens in the background (the answer is already out; shutdown waits for it). On a
 * recurrent model: the KV of its first `shared` tokens (sharedStart), when there are enough.
 */
export function saveCachedPrefix(deps: PrefixDeps, model: ModelView, prompt: number[], images: number, shared = 0): void {
  const exact = model.info.recurrent;
  const saved = exact ? prompt.slice(0, shared) : prompt;
  if (!cacheable(deps, saved, images, MIN_SAVE_TOKENS)) return;
  const store = deps.prefixes;
  const identity = model.session.identity;
  const first = PrefixStore.firstKey(identity, saved)!;
  const before = store.saving.get(first) ?? Promise.resolve();
  const work = before.then(() => savePrompt(deps, store, identity, saved, exact)).catch((e: unknown) => {
    if (store.firstTime('save')) deps.log.warn('prefix cache: a prompt\'s KV was not saved', failure(e));
  });
  const tail = work.finally(() => { if (store.saving.get(first) === tail) store.saving.delete(first); });
  store.saving.set(first, tail);
  store.track(tail);
}

/** `exact`: a file serves only prompts that start with all its tokens (a recurrent model's). */
async function savePrompt(deps: PrefixDeps, store: PrefixStore, identity: string, prompt: number[], exact: boolean): Promise<void> {
  const covered = await store.best(identity, prompt, exact);
  if (covered && covered.common >= COVERED * prompt.length) { await store.used(covered.name); return; }
  const { name, path } = await store.target(identity, prompt);
  const meta = JSON.stringify({ prefix_cache: { prompt_tokens: prompt.length } });
  let last: unknown = null;
  for (const client of deps.scheduler.replicasByCache(prompt)) {
    try {
      const res = await client.saveSession(path, prompt, identity, meta);
      if (exact && res.tokens !== prompt.length) {
        // The engine had no copy of exactly these tokens (its park was full or off): a file of the
        // whole conversation would serve no other prompt.
        await store.drop(name);
        deps.log.debug('prefix cache: not kept (the engine held no copy of the shared start alone)', { file: name, tokens: res.tokens });
        return;
      }
      const common = await store.added(name, identity, prompt, MIN_LOAD_TOKENS, exact ? null : COVERED);
      if (common > 0) deps.log.info('prefix cache: saved', { file: name, replica: client.replica, tokens: res.tokens, bytes: res.bytes, ms: Math.round(res.ms), state_ms: Math.round(res.phases.stateMs), write_ms: Math.round(res.phases.writeMs), sync_ms: Math.round(res.phases.syncMs) });
      else deps.log.debug('prefix cache: not kept (the engine no longer held the prompt, or it does not fit --prefix-cache-mib)', { file: name, bytes: res.bytes });
      return;
    } catch (e) {
      last = e;
    }
  }
  const f = last === null ? { code: 'engine_unavailable', error: 'no engine is ready' } : failure(last);
  if (store.firstTime(`save:${f.code}`)) deps.log.warn('prefix cache: a prompt\'s KV was not saved; a new session after a restart reads it afresh', f);
}
