// A fuzz round against the real server: random nested grammars and JSON schemas (a seeded
// generator, so a failure replays) on every route that takes one. Each answer is a 200 or a 400
// (a limit, a grammar that does not parse, a schema keyword the grammar cannot enforce), never a
// 500 or a 503, and the engine process that served the first request serves the last (same pid and
// epoch). Its first run found a 3.8 KB grammar of nested repetitions that held the engine for 9
// minutes until the silence watchdog restarted it (now refused: MAX_GRAMMAR_REPETITION_NESTING).
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { seededRandom } from '../../backend/bench/prompts.js';
import { ensureTestModel } from '../helpers/models.js';
import { json, metrics, raw, startServer, type Running } from './server-helpers.js';

vi.setConfig({ testTimeout: 600_000 });

const SEED = 20_261_204;
const INPUTS = 200;
/** The round stops early past this (a loaded 2-core machine); it must still have run a good share. */
const ROUND_MS = 120_000;

let srv: Running;
beforeAll(async () => {
  // Mistral's 32K vocabulary: a grammar checks its candidates faster than Qwen's 152K.
  srv = await startServer(await ensureTestModel({ vocab: 'mistral' }), { ctx: 512 });
});
afterAll(async () => { await srv?.close(); });

type Rnd = () => number;
const pick = <T>(rnd: Rnd, xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
const int = (rnd: Rnd, lo: number, hi: number) => lo + Math.floor(rnd() * (hi - lo + 1));

/** A GBNF expression nested up to `depth` groups, with the lexicon's traps (parens in literals and classes). */
function grammarExpr(rnd: Rnd, depth: number): string {
  if (depth <= 0 || rnd() < 0.15) {
    return pick(rnd, ['"a"', '"(("', '")|"', '[()]', '[^)]', '[a-z]{1,3}', '"x"{2}', '.', 'item', '"\\")"']);
  }
  const inner = Array.from({ length: int(rnd, 1, 3) }, () => grammarExpr(rnd, depth - 1));
  const body = rnd() < 0.5 ? inner.join(' | ') : inner.join(' ');
  return `(${body})${pick(rnd, ['', '', '?', '*', '+', '{0,2}'])}`;
}

function randomGrammar(rnd: Rnd): string {
  const shape = rnd();
  if (shape < 0.2) { // one deep chain of groups, around the limits (128 here, 256 in the engine)
    const depth = pick(rnd, [10, 127, 128, 129, 255, 256, 257, 1000, 5000]);
    return `root ::= ${'('.repeat(depth)}"a"${')'.repeat(depth)}`;
  }
  const g = `root ::= ${grammarExpr(rnd, int(rnd, 1, 12))}\nitem ::= "i" # a comment with ( and |`;
  if (shape < 0.3) return g.slice(0, int(rnd, 1, g.length)); // cut anywhere: mostly does not parse
  return g;
}

/** A JSON schema nested up to `depth` levels, now and then with a keyword the grammar cannot enforce. */
function schemaAt(rnd: Rnd, depth: number): Record<string, unknown> {
  if (depth <= 0 || rnd() < 0.1) {
    return pick(rnd, [{ type: 'string', maxLength: 3 }, { type: 'integer', minimum: 0, maximum: 9 }, { enum: ['a', 'b'] }, { type: 'boolean' }, { multipleOf: 3 }]);
  }
  switch (int(rnd, 0, 2)) {
    case 0: return { type: 'object', properties: { k: schemaAt(rnd, depth - 1) }, required: ['k'], additionalProperties: false };
    case 1: return { type: 'array', items: schemaAt(rnd, depth - 1), maxItems: 1 };
    default: return { anyOf: [schemaAt(rnd, depth - 1), { type: 'null' }] };
  }
}

function randomSchema(rnd: Rnd): Record<string, unknown> {
  return schemaAt(rnd, pick(rnd, [1, 3, 8, 20, 31, 32, 40, 100, 500]));
}

/** One request: its route and body. */
function randomRequest(rnd: Rnd): { path: string; body: Record<string, unknown> } {
  const stream = rnd() < 0.3;
  const messages = [{ role: 'user', content: 'Go.' }];
  switch (int(rnd, 0, 4)) {
    case 0: return { path: '/v1/completions', body: { prompt: 'x', max_tokens: 1, stream, grammar: randomGrammar(rnd) } };
    case 1: return { path: '/v1/chat/completions', body: { messages, max_tokens: 1, stream, grammar: randomGrammar(rnd) } };
    case 2: return { path: '/v1/completions', body: { prompt: 'x', max_tokens: 1, stream, json_schema: randomSchema(rnd) } };
    case 3: return {
      path: '/v1/chat/completions',
      body: { messages, max_tokens: 1, stream, response_format: { type: 'json_schema', json_schema: { name: 'f', schema: randomSchema(rnd) } } },
    };
    default: return {
      path: '/v1/messages',
      body: { messages, max_tokens: 1, stream, tools: [{ name: 't', input_schema: randomSchema(rnd) }], tool_choice: { type: pick(rnd, ['auto', 'any']) } },
    };
  }
}

describe('fuzz: random nested grammars and schemas', () => {
  it(`${INPUTS} inputs (seed ${SEED}): every answer is 200 or 400, and the engine process lives through them all`, async () => {
    const before = (await metrics(srv.port)).engines[0];
    const rnd = seededRandom(SEED);
    const seen = new Map<number, number>();
    const started = Date.now();
    let ran = 0;
    let slowest = { ms: 0, what: '' };
    for (; ran < INPUTS && Date.now() - started < ROUND_MS; ran++) {
      const { path, body } = randomRequest(rnd);
      const t0 = Date.now();
      const r = await raw(srv.port, 'POST', path, body);
      const ms = Date.now() - t0;
      if (ms > slowest.ms) slowest = { ms, what: `input ${ran}: ${path} ${r.status}` };
      seen.set(r.status, (seen.get(r.status) ?? 0) + 1);
      expect([200, 400], `input ${ran}: ${path} ${JSON.stringify(body).slice(0, 300)} -> ${r.status} ${r.body.slice(0, 300)}`).toContain(r.status);
    }
    console.log(`fuzz: ${ran} inputs in ${Date.now() - started} ms, answers ${JSON.stringify(Object.fromEntries(seen))}, slowest ${slowest.ms} ms (${slowest.what})`);
    expect(ran).toBeGreaterThanOrEqual(Math.min(INPUTS, 60));
    // Both kinds of answer came up (the round tests the limits and the paths past them).
    expect(seen.get(200) ?? 0).toBeGreaterThan(0);
    expect(seen.get(400) ?? 0).toBeGreaterThan(0);
    const after = (await metrics(srv.port)).engines[0];
    expect({ pid: after.pid, epoch: after.epoch }).toEqual({ pid: before.pid, epoch: before.epoch });
    expect((await json(srv.port, 'GET', '/health')).status).toBe(200);
  });
});
