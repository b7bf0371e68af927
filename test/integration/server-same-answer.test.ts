// A request's answer is a function of the request: with `deterministic`, greedy, turn 2 of a
// conversation (turn 1's answer carried back as the assistant message) gets the same answer and
// the same logprobs on the server that wrote turn 1 (its tokens still in the slot), after that
// conversation went to the park, after a session saved there was restored by another server (a
// restart), and on a fresh server that never saw the conversation. Two kinds
// of conversation: a chat whose answer's text tokenizes otherwise than the model sampled it, and
// an agent transcript (a forced tool call carried back as tool_calls, then the tool's result).
// What a server holds is reused only up to the first token the request's own tokenization differs
// in; it never replaces the request's tokens.
// STRATA_SAME_ANSWER_ROUNDS rounds (default 1), for each quant in STRATA_SAME_ANSWER_QUANTS (default
// f16 in the suite: a quant's round takes 4-5 minutes on 2 loaded cores, most of it the forced calls'
// grammar; the long check: f16,q8_0,q4_0 and 20 rounds); each round asks with other messages.
import { afterAll, describe, expect, it, vi } from 'vitest';
import type { TestModelQuant } from '../../native/lib/addon.js';
import { ensureTestModel } from '../helpers/models.js';
import { json, startServer, tempDir, type Running } from './server-helpers.js';

const ROUNDS = Number(process.env.STRATA_SAME_ANSWER_ROUNDS ?? 1);
const QUANTS = (process.env.STRATA_SAME_ANSWER_QUANTS ?? 'f16').split(',') as TestModelQuant[];

vi.setConfig({ testTimeout: 120_000 + ROUNDS * 600_000 });

interface Message { role: string; content: string | null; tool_calls?: unknown[]; tool_call_id?: string }
/** What must not depend on the server: the answer's text, its calls (less their random ids), each token's logprob. */
interface Answer { content: string | null; calls: string; finish: string; lps: number[]; prompt: number; cached: number }

const tools = [{ type: 'function', function: { name: 'read_file', parameters: { type: 'object', properties: { path: { enum: ['a.ts', 'b.ts', 'notes/todo.md'] } }, required: ['path'], additionalProperties: false } } }];
const forced = { type: 'function', function: { name: 'read_file' } };

interface Conversation { name: string; turn1: Message[]; agent: boolean }

function conversations(round: number, variant: string): Conversation[] {
  return [
    { name: `chat${variant}`, agent: false, turn1: [{ role: 'user', content: `Round ${round}${variant}: write whatever comes to mind about lists.` }] },
    {
      name: `agent${variant}`, agent: true,
      turn1: [{ role: 'system', content: 'You are a coding agent.' }, { role: 'user', content: `Round ${round}${variant}: read the files.` }],
    },
  ];
}

function request(c: Conversation, messages: Message[]): Record<string, unknown> {
  return {
    messages, temperature: 0, logprobs: true,
    // A forced call ends with the grammar (its path is one of three); a chat answer is 24 tokens.
    ...(c.agent ? { tools, tool_choice: forced, max_tokens: 120 } : { ignore_eos: true, max_tokens: 24 }),
  };
}

async function ask(s: Running, body: Record<string, unknown>): Promise<{ answer: Answer; message: Message }> {
  const r = await json(s.port, 'POST', '/v1/chat/completions', body);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  const choice = r.body.choices[0];
  const calls = (choice.message.tool_calls ?? []).map((t: { function: unknown }) => t.function);
  return {
    message: { role: 'assistant', content: choice.message.content, ...(choice.message.tool_calls ? { tool_calls: choice.message.tool_calls } : {}) },
    answer: {
      content: choice.message.content, calls: JSON.stringify(calls), finish: choice.finish_reason,
      lps: (choice.logprobs?.content ?? []).map((l: { logprob: number }) => l.logprob), prompt: r.body.usage.prompt_tokens,
      cached: r.body.usage.prompt_tokens_details.cached_tokens,
    },
  };
}

/** Turn 2's messages: turn 1's answer carried back as a client would (and the tool's result after a call). */
function turn2(c: Conversation, answer: Message): Message[] {
  const calls = answer.tool_calls as Array<{ id: string }> | undefined;
  if (c.agent) {
    expect(calls?.length, JSON.stringify(answer)).toBe(1);
    return [...c.turn1, answer, { role: 'tool', tool_call_id: calls![0]!.id, content: 'export const answer = 42;\n// the end of a.ts\n' }];
  }
  return [...c.turn1, answer, { role: 'user', content: 'And now the other way round.' }];
}

const parkHits = async (s: Running): Promise<number> => (await json(s.port, 'GET', '/metrics')).body.conversation_cache.hits as number;

const dirs: Array<{ remove(): void }> = [];
const open = new Set<Running>();
afterAll(async () => {
  await Promise.all([...open].map((s) => s.close()));
  for (const d of dirs) d.remove();
});

async function server(model: string, sessionsDir: string): Promise<Running> {
  const s = await startServer(model, { slots: 2, ctx: 2048, deterministic: true, sessionsDir, parkMib: 256 });
  open.add(s);
  return s;
}
async function stop(s: Running): Promise<void> { open.delete(s); await s.close(); }

/** Where a turn-2 answer came from, and the answer. */
type Got = Record<string, Answer>;

async function oneRound(model: string, round: number): Promise<Record<string, Got>> {
  const sessions = tempDir('strata-same-answer-');
  dirs.push(sessions);
  const inSlot = conversations(round, '');
  const parked = conversations(round, '-parked');
  const got: Record<string, Got> = {};
  const messages: Record<string, Message[]> = {};
  const note = (c: Conversation, where: string, a: Answer) => { (got[c.name] ??= {})[where] = a; };

  // The server that writes turn 1.
  const a = await server(model, sessions.dir);
  for (const c of inSlot) {
    const first = await ask(a, request(c, c.turn1));
    messages[c.name] = turn2(c, first.message);
    const saved = await json(a.port, 'POST', '/v1/sessions', { name: c.name, messages: [...c.turn1, first.message], ...(c.agent ? { tools } : {}) });
    expect(saved.status, JSON.stringify(saved.body)).toBe(201);
    note(c, 'same server', (await ask(a, request(c, messages[c.name]!))).answer);
  }
  // Turn 1 of two more, then three other conversations on the two slots: both go to the park.
  for (const c of parked) messages[c.name] = turn2(c, (await ask(a, request(c, c.turn1))).message);
  for (const n of [1, 2, 3]) await ask(a, { messages: [{ role: 'user', content: `Something else ${round}.${n}` }], temperature: 0, max_tokens: 4 });
  const hits = await parkHits(a);
  for (const c of parked) note(c, 'after the park', (await ask(a, request(c, messages[c.name]!))).answer);
  expect(await parkHits(a)).toBe(hits + parked.length);
  await stop(a);

  // A restart: another server restores the sessions the first one saved.
  const b = await server(model, sessions.dir);
  for (const c of inSlot) {
    const restored = await json(b.port, 'POST', `/v1/sessions/${c.name}/restore`);
    expect(restored.status, JSON.stringify(restored.body)).toBe(200);
    note(c, 'restored session', (await ask(b, request(c, messages[c.name]!))).answer);
  }
  await stop(b);

  // A fresh server, reading every prompt whole.
  const f = await server(model, sessions.dir);
  for (const c of [...inSlot, ...parked]) note(c, 'fresh server', (await ask(f, request(c, messages[c.name]!))).answer);
  await stop(f);
  return got;
}

describe('deterministic server: turn 2 gets the answer a fresh server gives, whatever the server held', () => {
  for (const quant of QUANTS) {
    it(`${quant}: same server, after the park, restored session, fresh server (${ROUNDS} rounds)`, async () => {
      const model = await ensureTestModel({ vocab: 'qwen2.5-coder', chatTemplate: 'Qwen-Qwen2.5-7B-Instruct', quant });
      const failures: string[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        const started = Date.now();
        const got = await oneRound(model, round);
        const before = failures.length;
        for (const [name, by] of Object.entries(got)) {
          const fresh = by['fresh server']!;
          expect(fresh.lps.length, `${name}: logprobs`).toBeGreaterThan(0);
          for (const [where, a] of Object.entries(by)) {
            if (where === 'fresh server') continue;
            // Each path reused what the server held (the slot, the park, the restored session).
            if (!(a.cached > 0)) failures.push(`round ${round}, ${name}, ${where}: nothing reused`);
            const same = a.content === fresh.content && a.calls === fresh.calls && a.finish === fresh.finish && a.prompt === fresh.prompt
              && a.lps.length === fresh.lps.length && a.lps.every((v, i) => Object.is(v, fresh.lps[i]));
            if (!same) failures.push(`round ${round}, ${name}, ${where}: ${a.prompt} prompt tokens, ${JSON.stringify(a.content ?? a.calls).slice(0, 60)} vs fresh ${fresh.prompt}, ${JSON.stringify(fresh.content ?? fresh.calls).slice(0, 60)}`);
          }
        }
        // Progress of a long run: one line per round, so a run stopped early still says how far it got.
        process.stderr.write(`[same-answer] ${quant} round ${round + 1}/${ROUNDS}: ${failures.length === before ? 'same' : `${failures.length - before} differ`} (${((Date.now() - started) / 1000).toFixed(0)} s)\n`);
      }
      expect(failures).toEqual([]);
    });
  }
});
