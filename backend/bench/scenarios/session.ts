// session: a conversation of ~sessionTokens tokens is read, then saved to disk and restored
// `sessionRounds` times over HTTP, then continued. Ours: POST /v1/sessions {name, prompt} and
// POST /v1/sessions/{name}/restore (straight into an idle slot, the one the session supersedes;
// the answer's `into` says where it went). llama-server (started with --slot-save-path): the
// conversation pinned to slot 0 (id_slot), POST /slots/0?action=save|restore (into the slot).
// Figures: save and restore round trips (p50), the save without its sync (ours: the round trip
// minus the answer's engine.sync_ms, the fdatasync + rename + folder fsync that llama-server does
// not do; llama-server's save as it is), the servers' own times, and the continuation's TTFT.
import { BenchHttpError, getJson, postJson } from '../client.js';
import { seedOf } from '../prompts.js';
import { median } from '../stats.js';
import type { BenchContext, Scenario } from '../types.js';
import { capToContext, complete, emptyRun, metric, nonceFor, tally } from './common.js';
import { SCENARIO_MEASURES } from '../../../contract/bench.js';

const ANSWER_TOKENS = 8;
const FOLLOW_UP_TOKENS = 32;

interface SessionApi {
  kind: 'strata' | 'llama-server';
  /** Body fields that pin a completion to the saved slot (llama-server). */
  pin: Record<string, unknown>;
  /** `timings`: the server's own breakdown as it answered (ours: per phase), kept in the conditions. */
  /** `syncMs`: the part of the save spent making it durable (ours: engine.sync_ms; llama-server: 0, it does not sync). */
  save(conversation: string): Promise<{ serverMs: number | null; syncMs: number; bytes: number | null; tokens: number | null; timings: unknown }>;
  /** `into`: where ours put the state ('slot' or 'park'); null for llama-server. */
  restore(): Promise<{ serverMs: number | null; into: string | null; timings: unknown }>;
  cleanup(): Promise<void>;
}

const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

/** The server's session API: ours (/v1/sessions) or llama-server's slot files (/slots); null: neither. */
async function sessionApi(ctx: BenchContext, name: string): Promise<SessionApi | null> {
  const t = ctx.target;
  const ours = await getJson(t, '/v1/sessions') as { object?: unknown } | null;
  if (ours && ours.object === 'list') {
    return {
      kind: 'strata', pin: {},
      async save(conversation) {
        const j = await postJson(t, '/v1/sessions', { name, prompt: conversation }) as Record<string, unknown>;
        const timings = j.timings as { engine_ms?: unknown; engine?: { sync_ms?: unknown } } | undefined;
        return {
          serverMs: num(timings?.engine_ms), syncMs: num(timings?.engine?.sync_ms) ?? 0, bytes: num(j.bytes), tokens: num(j.tokens),
          timings: j.timings ?? null,
        };
      },
      async restore() {
        const j = await postJson(t, `/v1/sessions/${name}/restore`, {}) as Record<string, unknown>;
        return {
          serverMs: num((j.timings as { engine_ms?: unknown } | undefined)?.engine_ms), into: typeof j.into === 'string' ? j.into : null,
          timings: j.timings ?? null,
        };
      },
      async cleanup() {
        await fetch(`${t.url}/v1/sessions/${name}`, { method: 'DELETE', headers: t.apiKey ? { authorization: `Bearer ${t.apiKey}` } : {} }).then((r) => r.body?.cancel(), () => undefined);
      },
    };
  }
  if (Array.isArray(await getJson(t, '/slots'))) {
    const file = `${name}.bin`;
    return {
      kind: 'llama-server', pin: { id_slot: 0 },
      async save() {
        const j = await postJson(t, '/slots/0?action=save', { filename: file }) as Record<string, unknown>;
        return {
          serverMs: num((j.timings as { save_ms?: unknown } | undefined)?.save_ms), syncMs: 0, bytes: num(j.n_written), tokens: num(j.n_saved),
          timings: j.timings ?? null,
        };
      },
      async restore() {
        const j = await postJson(t, '/slots/0?action=restore', { filename: file }) as Record<string, unknown>;
        return { serverMs: num((j.timings as { restore_ms?: unknown } | undefined)?.restore_ms), into: null, timings: j.timings ?? null };
      },
      async cleanup() { /* the files stay in --slot-save-path (the comparison's own folder) */ },
    };
  }
  return null;
}

export const session: Scenario = {
  name: 'session',
  summary: SCENARIO_MEASURES.session,
  async run(ctx, runIndex) {
    const out = emptyRun();
    const s = ctx.settings;
    const name = `bench-${ctx.salt}-${runIndex}`;
    const api = await sessionApi(ctx, name);
    if (!api) {
      out.notes.push('skipped: the server has neither /v1/sessions (Strata) nor /slots (llama-server)');
      return out;
    }
    const tokens = capToContext(ctx, s.sessionTokens, ANSWER_TOKENS + FOLLOW_UP_TOKENS + 16);
    const conv = await ctx.sizer.prose(tokens, seedOf('session/conversation'), nonceFor(ctx, 'session', runIndex));
    const followUp = await ctx.sizer.prose(FOLLOW_UP_TOKENS, seedOf('session/follow-up'));

    ctx.progress(`session: conversation of ${conv.tokens} tokens`);
    const a = await complete(ctx, conv.text, ANSWER_TOKENS, out, api.pin);
    if (a.failed) return out;
    const saves: number[] = [];
    const savesNoSync: number[] = [];
    const restores: number[] = [];
    const savesServer: number[] = [];
    const restoresServer: number[] = [];
    let saved: Awaited<ReturnType<SessionApi['save']>> | null = null;
    let restored: Awaited<ReturnType<SessionApi['restore']>> | null = null;
    ctx.progress(`session: ${s.sessionRounds} saves and restores (${api.kind})`);
    try {
      for (let i = 0; i < s.sessionRounds; i++) {
        let t0 = performance.now();
        try {
          saved = await api.save(conv.text);
          saves.push(performance.now() - t0);
          savesNoSync.push(performance.now() - t0 - saved.syncMs);
          if (saved.serverMs !== null) savesServer.push(saved.serverMs);
          tally(out, null, 0);
          t0 = performance.now();
          restored = await api.restore();
          restores.push(performance.now() - t0);
          if (restored.serverMs !== null) restoresServer.push(restored.serverMs);
          tally(out, null, 0);
        } catch (err) {
          tally(out, (err as Error).message, 0);
          if (err instanceof BenchHttpError && (err.status === 501 || /not supported|slot-save-path/i.test(err.body))) {
            out.notes.push(`skipped: ${err.message} (llama-server needs --slot-save-path)`);
            return out;
          }
        }
      }
      ctx.progress('session: continuation after the restore');
      const c = await complete(ctx, `${conv.text}${a.text}\n\n${followUp.text}`, 1, out, api.pin);
      out.metrics.push(
        metric('session_save_ms', 'save over HTTP (p50)', 'ms', 'lower', median(saves)),
        metric('session_save_nosync_ms', 'save excluding sync (p50)', 'ms', 'lower', median(savesNoSync)),
        metric('session_restore_ms', 'restore over HTTP (p50)', 'ms', 'lower', median(restores)),
        metric('session_save_server_ms', 'save, server-reported (p50)', 'ms', 'info', median(savesServer)),
        metric('session_restore_server_ms', 'restore, server-reported (p50)', 'ms', 'info', median(restoresServer)),
        metric('session_resume_ttft_ms', 'continuation TTFT after restore', 'ms', 'lower', c.failed ? Number.NaN : c.ttftMs),
      );
      out.samples.session_save_ms = saves;
      out.samples.session_save_nosync_ms = savesNoSync;
      out.samples.session_restore_ms = restores;
      out.conditions = {
        api: api.kind, conversationTokens: a.promptTokens ?? conv.tokens, savedTokens: saved?.tokens ?? null,
        savedBytes: saved?.bytes ?? null, rounds: s.sessionRounds, reusedByContinuation: c.cachedTokens,
        lastSaveTimings: saved?.timings ?? null, lastRestoreTimings: restored?.timings ?? null, restoredInto: restored?.into ?? null,
      };
    } finally {
      await api.cleanup();
    }
    return out;
  },
};
