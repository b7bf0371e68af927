// Sessions as the API offers them: save the conversation some messages form (from the slot
// or the park of the replica that holds it) to disk, restore one into a replica (an idle slot,
// else its park) so the next request with that prefix starts from it, list, delete. Another
// model's session is refused before its state reaches a slot (the engine checks the file first).
import type { SessionPhases } from '../../native/lib/addon.js';
import type { SessionSaveRequest } from '../validation/schemas.js';
import { engineCallApiError } from '../validation/engine-errors.js';
import { apiError, type ApiError } from '../validation/errors.js';
import { renderChatPrompt, tokenizeChatPrompt, tokenizeRawPrompt } from '../chat/chat-prompt.js';
import type { EngineClient } from '../engine/client.js';
import type { Logger } from '../log/logger.js';
import type { Scheduler } from '../scheduler/scheduler.js';
import type { ModelView } from '../served-model/model-view.js';
import { SessionStore, SessionUnreadableError } from './session-store.js';
import type { RestoreResult, SavedSession, SessionMeta, SessionTimings } from '../../contract/sessions.js';

function engineTimings(p: SessionPhases, fileMs: number): SessionTimings['engine'] {
  const r = (x: number) => Math.round(x * 100) / 100;
  return { state_ms: r(p.stateMs), read_ms: r(p.readMs), hash_ms: r(p.hashMs), write_ms: r(p.writeMs), sync_ms: r(p.syncMs), file_ms: r(fileMs) };
}

const msSince = (t0: number) => Math.round((performance.now() - t0) * 100) / 100;

export class SessionService {
  constructor(
    readonly store: SessionStore,
    private readonly deps: { model: () => ModelView | null; scheduler: Scheduler; log: Logger },
  ) {}

  list(): ReturnType<SessionStore['list']> { return this.store.list(); }

  async get(name: string): Promise<SessionMeta> {
    let meta: SessionMeta | null;
    try {
      meta = await this.store.get(name);
    } catch (e) {
      throw sessionError(e, `cannot read session '${name}'`, 'loadSession');
    }
    if (!meta) throw apiError('session_not_found', `no session named '${name}'`, { param: 'name' });
    return meta;
  }

  /** Removes what interrupted saves left behind (at start) and says so in the log. */
  async sweep(): Promise<void> {
    try {
      const { removed, orphans } = await this.store.sweep();
      if (removed.length > 0) this.deps.log.info('sessions: removed leftovers of interrupted saves', { dir: this.store.dir, files: removed.join(', ') });
      if (orphans.length > 0) this.deps.log.warn('sessions: state files without their description (saved by an older version); listed without messages', { dir: this.store.dir, files: orphans.join(', ') });
    } catch (e) {
      this.deps.log.warn('sessions: could not check the sessions folder', { dir: this.store.dir, error: (e as Error).message });
    }
  }

  async save(req: SessionSaveRequest): Promise<SavedSession> {
    const t0 = performance.now();
    const model = this.requireModel();
    const { messages, prompt } = req;
    if (!messages && prompt === null) {
      throw apiError('missing_required_parameter', 'give the conversation to save as messages (or as prompt text)', { param: 'messages' });
    }
    const tokenizer = this.requireClient();
    // Messages become tokens exactly as a chat request's do (chat/chat-prompt.ts); prompt text as a
    // completion's. So the request that continues a restored session starts with the saved tokens,
    // on this server or any other, and its answer is the one a fresh server gives.
    const tokens = messages
      ? await tokenizeChatPrompt(tokenizer, renderChatPrompt(model, messages, { ...(req.tools.length ? { tools: req.tools } : {}), addGenerationPrompt: false }))
      : await tokenizeRawPrompt(tokenizer, model, prompt ?? '');
    if (tokens.length === 0) throw apiError('empty_prompt', 'the conversation is empty', { param: req.messages ? 'messages' : 'prompt' });
    const promptMs = msSince(t0);
    await this.store.ensureDir();
    const path = this.store.statePath(req.name);
    const created = new Date();
    const description = SessionStore.describe(model.session, req.messages, created);
    const candidates = this.deps.scheduler.replicasByCache(tokens);
    let lastError: unknown = null;
    for (const client of candidates) {
      try {
        const t1 = performance.now();
        const res = await client.saveSession(path, tokens, model.session.identity, description);
        const engineMs = msSince(t1);
        await this.store.dropLegacyMeta(req.name);
        const saved: SavedSession = {
          name: req.name, model: model.session, tokens: res.tokens, bytes: res.bytes, created: created.toISOString(),
          messages: req.messages, message_count: req.messages?.length ?? 0, format: 2, save_ms: Math.round(res.ms),
          timings: { total_ms: msSince(t0), prompt_ms: promptMs, engine_ms: engineMs, engine: engineTimings(res.phases, res.ms) },
        };
        this.deps.log.info('session saved', { session: req.name, replica: client.replica, tokens: res.tokens, bytes: res.bytes, ms: saved.timings.total_ms });
        return saved;
      } catch (e) {
        lastError = e;
      }
    }
    throw sessionError(lastError, `could not save session '${req.name}'`, 'saveSession');
  }

  async restore(name: string): Promise<RestoreResult> {
    const t0 = performance.now();
    const model = this.requireModel();
    const client = this.requireClient();
    let res: Awaited<ReturnType<EngineClient['loadSession']>>;
    const t1 = performance.now();
    // Straight to the engine: it checks the file's model and checksum before anything changes, and
    // the description comes back with the state. The head is read here (10 file calls) only for a
    // refusal, where it gives the status a client acts on (404, 409 naming both models, 422), and
    // before a format-1 session, whose model and description are in a sidecar the engine does not read.
    if (await this.store.hasLegacyMeta(name)) await this.checkRestorable(name, model);
    try {
      res = await client.loadSession(this.store.statePath(name), model.session.identity);
    } catch (e) {
      await this.checkRestorable(name, model);
      const err = sessionError(e, `could not restore session '${name}'`, 'loadSession');
      // The model is this one (checked above): the engine's mismatch is the KV layout's.
      const conversation = err.code === 'session_model_mismatch' ? await this.conversationOnly(name, t0) : null;
      if (conversation) return conversation;
      throw err;
    }
    const engineMs = msSince(t1);
    // The messages stored with the state the engine just loaded (the file may have been saved
    // again since the head was read); format 1 kept none.
    let messages: RestoreResult['messages'];
    try {
      messages = res.meta ? this.store.parseDescription(name, res.meta, 'description').messages : null;
    } catch (e) {
      throw sessionError(e, `could not restore session '${name}'`, 'loadSession');
    }
    // Reused by the next request only up to the first token its own tokenization differs in (older
    // files may hold the tokens the model sampled for an answer, not how its text tokenizes).
    this.deps.scheduler.noteCached(client.replica, Array.from(res.tokenIds));
    const timings: SessionTimings = { total_ms: msSince(t0), engine_ms: engineMs, engine: engineTimings(res.phases, res.ms) };
    this.deps.log.info('session restored', { session: name, replica: client.replica, into: res.into, tokens: res.tokens, ms: timings.total_ms });
    return { name, tokens: res.tokens, bytes: res.bytes, ms: Math.round(res.ms), replica: client.replica, into: res.into, messages, timings };
  }

  /**
   * A session of this model whose KV the engine cannot load here (saved with the other context
   * layout: a context per slot, or the one the slots share): the conversation comes back without
   * its KV, so what the user saved is not lost; the next request reads it afresh. Null when the
   * session holds no conversation.
   */
  private async conversationOnly(name: string, t0: number): Promise<RestoreResult | null> {
    let meta: SessionMeta | null;
    try { meta = await this.store.get(name); } catch { return null; }
    if (!meta?.messages) return null;
    this.deps.log.warn('session state not loaded (saved with the other context layout); its conversation is restored without its KV', { session: name });
    const engine = { state_ms: 0, read_ms: 0, hash_ms: 0, write_ms: 0, sync_ms: 0, file_ms: 0 };
    return { name, tokens: 0, bytes: meta.bytes, ms: 0, replica: -1, into: 'none', messages: meta.messages, timings: { total_ms: msSince(t0), engine_ms: 0, engine } };
  }

  /** Throws the store's reason a session cannot be restored here (missing, unreadable, another model's), if it has one. */
  private async checkRestorable(name: string, model: ModelView): Promise<void> {
    const meta = await this.get(name);
    if (meta.model.identity !== model.session.identity) {
      throw apiError('session_model_mismatch', `session '${name}' was saved with model '${meta.model.name}' (${meta.model.file}); this server runs '${model.id}' (${model.session.file}). Restore it on a server running that model.`, { param: 'name' });
    }
  }

  async remove(name: string): Promise<void> {
    if (!(await this.store.remove(name))) throw apiError('session_not_found', `no session named '${name}'`, { param: 'name' });
  }

  private requireModel(): ModelView {
    const m = this.deps.model();
    if (!m) throw apiError('model_loading');
    return m;
  }

  private requireClient(): EngineClient {
    const c = this.deps.scheduler.anyReadyClient();
    if (!c) throw apiError('engine_unavailable', this.deps.scheduler.unavailableReason());
    return c;
  }
}

/** A session's failure as the status a client can act on: the store's own refusal, else the engine's code (validation/engine-errors.ts). */
export function sessionError(e: unknown, what: string, call: 'saveSession' | 'loadSession'): ApiError {
  if (e instanceof SessionUnreadableError) return apiError('session_unreadable', e.message, { param: 'name' });
  return engineCallApiError(e, call, what);
}
