// The coding agents' recorded sessions (test/fixtures/agents/NAME-session.json, the requests the
// real pinned clients sent) replayed against a real server on a test model with a 32K training
// context, the prefix cache in a temporary folder; what each API's own usage fields say of reuse:
// the next turn of a session reuses at least 95% of the previous prompt, and the first request of a
// new session of the same client (Claude Code's billing header differs per session) reuses at least
// 90% of the client's system prompt and tools, after a restart (the first server saved the first
// session's prompt, the second loads it) and on the same server without the prefix cache; it reads
// anew only its own task (Claude Code's environment, a system message it sends after the task, joins
// the system prompt).
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AGENT_CLIENTS, loadAgentSession, prepared, replay, type AgentDialect, type Replayed } from '../../tools/bench-compare/agents-replay.js';
import { ensureTestModel } from '../helpers/models.js';
import { startServer, tempDir, type Running } from './server-helpers.js';

const root = join(import.meta.dirname, '..', '..');
const CTX = 32768;
/** The second session's task (one short sentence) with the template's tokens around it. */
const NEW_TASK_TOKENS = 64;
const dirs = tempDir('strata-agent-reuse-');
let modelPath: string;

beforeAll(async () => {
  modelPath = await ensureTestModel({ vocab: 'qwen2.5-coder', chatTemplate: 'Qwen-Qwen2.5-7B-Instruct', ctxTrain: CTX });
});
afterAll(() => dirs.remove());

/** A server with the prefix cache in the client's own folder (`mib` 0: no prefix cache). */
const serve = (client: string, mib = 1024) => startServer(modelPath, {
  slots: 2, ctx: CTX, batch: 512, threads: 2, prefixCacheDir: join(dirs.dir, client), prefixCacheMib: mib,
  sessionsDir: join(dirs.dir, 'sessions'), responsesDir: join(dirs.dir, 'responses'),
});

/**
 * The request with its conversation cut to the system prompt and one short user message: its
 * prompt is the client's system prompt and tools (and the template's few tokens around them).
 */
function systemAndTools(d: AgentDialect, body: Record<string, any>): Record<string, any> {
  const user = { role: 'user', content: 'x' };
  if (d === 'messages') return { ...body, messages: [user] };
  const items: any[] = d === 'responses' ? body.input : body.messages;
  const lead = items.slice(0, items.findIndex((m) => m.role !== 'system' && m.role !== 'developer'));
  return d === 'responses' ? { ...body, input: [...lead, user] } : { ...body, messages: [...lead, user] };
}

describe.each(AGENT_CLIENTS)('%s: recorded requests replayed', (client) => {
  const s = loadAgentSession(root, client);
  const send = async (srv: Running, body: Record<string, any>): Promise<Replayed & { prompt: number; cached: number }> => {
    const r = await replay({ url: srv.url, model: 'any' }, s.dialect, s.path, prepared(s.dialect, body, { model: 'any', maxTokens: 8 }));
    expect(r.status, r.error ?? '').toBe(200);
    expect(r.error).toBeNull();
    expect(r.prompt, 'usage reports the prompt').not.toBeNull();
    expect(r.cached, 'usage reports the cached tokens').not.toBeNull();
    return r as Replayed & { prompt: number; cached: number };
  };
  /** The first turn, with the client's side request beside it as the client sends it. */
  const firstTurn = async (srv: Running) => (await Promise.all([send(srv, s.turns[0]!), s.side ? send(srv, s.side) : null]))[0];
  let base = 0;

  it('each next turn reuses >= 95% of the previous prompt', async () => {
    const srv = await serve(client);
    try {
      let previous = (await firstTurn(srv)).prompt;
      for (const [i, turn] of s.turns.slice(1).entries()) {
        const r = await send(srv, turn);
        console.log(`${client} turn ${i + 2}: prompt ${r.prompt}, cached ${r.cached} of the previous ${previous}`);
        expect(r.cached, `turn ${i + 2}`).toBeGreaterThanOrEqual(0.95 * previous);
        previous = r.prompt;
      }
      // Mostly cached (the prefix cache's file holds it), so it writes no file of its own.
      base = (await send(srv, systemAndTools(s.dialect, s.second))).prompt;
      expect(base).toBeGreaterThan(1024);
    } finally {
      // Closing waits for the prefix cache's saves.
      await srv.close();
    }
  }, 600_000);

  it('after a restart, a new session reads >= 90% of its system prompt and tools from the prefix cache', async () => {
    expect(base, 'the first server measured the system prompt and tools').toBeGreaterThan(1024);
    const srv = await serve(client);
    try {
      const r = await send(srv, s.second);
      console.log(`${client} second session after a restart: prompt ${r.prompt}, cached ${r.cached} (system prompt and tools ${base})`);
      expect(srv.logs.some((l) => l.includes('prefix cache: loaded'))).toBe(true);
      expect(r.cached).toBeGreaterThanOrEqual(0.9 * base);
      expect(r.prompt - r.cached, 'tokens read anew: the task and the template around it').toBeLessThanOrEqual(NEW_TASK_TOKENS);
    } finally {
      await srv.close();
    }
  }, 600_000);

  it('on the same server, a new session reuses >= 90% of the system prompt and tools of the one before', async () => {
    expect(base, 'the first server measured the system prompt and tools').toBeGreaterThan(1024);
    const srv = await serve(`${client}-same`, 0);
    try {
      await firstTurn(srv);
      const r = await send(srv, s.second);
      console.log(`${client} second session on the same server: prompt ${r.prompt}, cached ${r.cached} (system prompt and tools ${base})`);
      expect(r.cached).toBeGreaterThanOrEqual(0.9 * base);
      expect(r.prompt - r.cached, 'tokens read anew: the task and the template around it').toBeLessThanOrEqual(NEW_TASK_TOKENS);
    } finally {
      await srv.close();
    }
  }, 600_000);
});
