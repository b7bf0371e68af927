// The prefix cache on the real engine (random-weight test model, --deterministic): a request with a
// long system prompt and tools has its prompt's KV written to the cache's folder after its answer;
// a new server on the same folder loads it for a new session with the same system prompt and tools
// and another user message, which then reports most of the shared prefix as cached, in each chat
// dialect, and answers exactly as a cold server does.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureTestModel } from '../helpers/models.js';
import { json, startServer, tempDir, type Running } from './server-helpers.js';

const dirs = tempDir('strata-prefix-cache-');
let modelPath: string;
/** Both context layouts: a context per slot (--ctx), and the default, one context the slots share. */
const LAYOUTS = [{ name: 'a context per slot', ctx: 4096 as number | null }, { name: 'the shared context (the default)', ctx: null }];
let layout = LAYOUTS[0]!;
const cacheDir = () => join(dirs.dir, `prefix-cache-${layout.ctx ?? 'shared'}`);
const config = (prefixCacheMib: number) => ({
  slots: 3, ctx: layout.ctx, deterministic: true, prefixCacheDir: cacheDir(), prefixCacheMib,
  sessionsDir: join(dirs.dir, 'sessions'), responsesDir: join(dirs.dir, 'responses'),
});

beforeAll(async () => { modelPath = await ensureTestModel({}); });
afterAll(() => dirs.remove());

const WORDS = ['files', 'tests', 'imports', 'comments', 'names', 'errors', 'logs', 'docs', 'types', 'folders', 'builds'];
/** A coding agent's long system prompt (about 1,400 tokens), its first line the agent's own. */
function systemPrompt(agent: string): string {
  const rules = Array.from({ length: 70 }, (_, i) =>
    `Rule ${i + 1}: when you change ${WORDS[i % WORDS.length]}, keep the ${WORDS[(i * 3 + 1) % WORDS.length]} consistent and say why in one line.`);
  return [`You are ${agent}, a coding agent working in the user's repository.`, ...rules].join('\n');
}
const TOOLS = [
  { name: 'read_file', description: 'Read a file of the workspace', parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] } },
  { name: 'run_command', description: 'Run a shell command and return its output', parameters: { type: 'object', properties: { command: { type: 'string' }, timeout_ms: { type: 'integer' } }, required: ['command'] } },
];

/** One request of a dialect and what it says about its prompt. */
interface Dialect {
  name: string;
  send(srv: Running, system: string, user: string): Promise<Sent>;
}
interface Sent { answer: unknown; prompt: number; cached: number }
/** A request and its time, ms (printed, not asserted). */
async function timed(send: Promise<Sent>): Promise<Sent & { ms: number }> {
  const t0 = performance.now();
  return { ...(await send), ms: Math.round(performance.now() - t0) };
}
const DIALECTS: Dialect[] = [
  {
    name: 'chat completions',
    async send(srv, system, user) {
      const r = await json(srv.port, 'POST', '/v1/chat/completions', {
        model: 'any', temperature: 0, max_tokens: 8, messages: [{ role: 'system', content: system }, { role: 'user', content: user }],
        tools: TOOLS.map((t) => ({ type: 'function', function: t })),
      });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      return { answer: r.body.choices[0].message, prompt: r.body.usage.prompt_tokens, cached: r.body.usage.prompt_tokens_details.cached_tokens };
    },
  },
  {
    name: 'Anthropic Messages',
    async send(srv, system, user) {
      const r = await json(srv.port, 'POST', '/v1/messages', {
        model: 'any', temperature: 0, max_tokens: 8, system, messages: [{ role: 'user', content: user }],
        tools: TOOLS.map((t) => ({ name: t.name, description: t.description, input_schema: t.parameters })),
      });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      const u = r.body.usage;
      return { answer: r.body.content, prompt: u.input_tokens + u.cache_read_input_tokens, cached: u.cache_read_input_tokens };
    },
  },
  {
    name: 'Responses',
    async send(srv, system, user) {
      const r = await json(srv.port, 'POST', '/v1/responses', {
        model: 'any', temperature: 0, max_output_tokens: 8, store: false, instructions: system, input: user,
        tools: TOOLS.map((t) => ({ type: 'function', ...t })),
      });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      const answer = r.body.output.map((o: Record<string, unknown>) => ({ ...o, id: undefined, call_id: undefined }));
      return { answer, prompt: r.body.usage.input_tokens, cached: r.body.usage.input_tokens_details.cached_tokens };
    },
  },
];
const systemOf = (d: Dialect) => systemPrompt(`the ${d.name} agent`);
const FIRST = 'List the files of the src folder.';
const SECOND = 'Why does the build fail on Windows?';

describe.each(LAYOUTS)('the prefix cache, $name', (l) => {
  beforeAll(() => { layout = l; });
  const warm = new Map<string, Sent & { ms: number }>();

  it('saves a long prompt\'s KV after the answer; a new server loads it for a new session with the same start', async () => {
    const first = await startServer(modelPath, config(64));
    try {
      for (const d of DIALECTS) {
        const a = await d.send(first, systemOf(d), FIRST);
        expect(a.prompt, d.name).toBeGreaterThanOrEqual(1024);
      }
    } finally {
      // Closing waits for the saves in the background.
      await first.close();
    }
    const files = readdirSync(cacheDir()).filter((f) => f.endsWith('.session'));
    expect(files).toHaveLength(DIALECTS.length);
    expect(statSync(cacheDir()).mode & 0o777).toBe(0o700);
    for (const f of files) expect(statSync(join(cacheDir(), f)).mode & 0o777).toBe(0o600);

    const second = await startServer(modelPath, config(64));
    try {
      for (const d of DIALECTS) warm.set(d.name, await timed(d.send(second, systemOf(d), SECOND)));
      expect(second.logs.filter((l) => l.includes('prefix cache: loaded'))).toHaveLength(DIALECTS.length);
    } finally {
      await second.close();
    }
  }, 600_000);

  it('reports most of the shared prefix as cached and answers as a cold server does', async () => {
    // A cold server without the cache: the same requests, then the first ones, whose cached tokens
    // (from the slots the second ones left) are what the two share.
    const cold = await startServer(modelPath, { ...config(0), prefixCacheDir: join(dirs.dir, 'unused') });
    try {
      const coldAnswers = new Map<string, Sent & { ms: number }>();
      for (const d of DIALECTS) coldAnswers.set(d.name, await timed(d.send(cold, systemOf(d), SECOND)));
      for (const d of DIALECTS) {
        const shared = (await d.send(cold, systemOf(d), FIRST)).cached;
        const w = warm.get(d.name)!;
        const c = coldAnswers.get(d.name)!;
        console.log(`${d.name}: prompt ${w.prompt}, shared prefix ${shared}, cached after the restart ${w.cached} (${w.ms} ms), cold ${c.cached} (${c.ms} ms)`);
        expect(shared, d.name).toBeGreaterThanOrEqual(1000);
        expect(w.cached, d.name).toBeGreaterThanOrEqual(0.9 * shared);
        expect(w.cached, d.name).toBeLessThanOrEqual(shared);
        expect(c.cached, d.name).toBeLessThan(0.1 * shared);
        expect(w.prompt, d.name).toBe(c.prompt);
        // Exact answers are a per-slot context's promise (--deterministic); the shared one places cells as requests come.
        if (layout.ctx !== null) expect(w.answer, d.name).toEqual(c.answer);
      }
    } finally {
      await cold.close();
    }
  }, 600_000);
});
