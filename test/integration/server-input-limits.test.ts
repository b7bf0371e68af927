// The server's input limits on the real engine, with the inputs that broke it: a grammar of 60,000
// nested groups (the engine process died), a 2 MB grammar of 200,000 alternatives (its request
// held for minutes), a 3,000-level JSON schema in response_format and in a /v1/messages tool
// (500, stack overflow). Each is a prompt 400 naming the field and the limit, streamed or not, and
// the engine process that served before serves after (same pid, same epoch).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_GRAMMAR_ALTERNATIVES, MAX_GRAMMAR_BYTES, MAX_GRAMMAR_NESTING, MAX_JSON_DEPTH } from '../../backend/validation/limits.js';
import { alternativesGrammar, bodyWithSchema, deepSchemaJson, nestedGrammar } from '../helpers/hostile-inputs.js';
import { ensureTestModel } from '../helpers/models.js';
import { greedy, json, metrics, raw, startServer, type Running } from './server-helpers.js';

let srv: Running;
let engine: { pid: number; epoch: number };

beforeAll(async () => {
  srv = await startServer(await ensureTestModel({}), { ctx: 512 });
  const e = (await metrics(srv.port)).engines[0];
  engine = { pid: e.pid, epoch: e.epoch };
});
afterAll(async () => { await srv?.close(); });

const user = [{ role: 'user', content: 'Say something.' }];
/** A string schema whose pattern has 12,000 alternatives (enum values past the limit are refused before converting). */
const wordsPattern = { type: 'string', pattern: `^(${Array.from({ length: 12_000 }, (_, i) => `w${i}`).join('|')})$` };

/** The status and the error's message, code and param (OpenAI or Anthropic body), and how long it took. */
async function refused(path: string, body: Record<string, unknown> | string) {
  const started = Date.now();
  const r = await raw(srv.port, 'POST', path, body);
  const ms = Date.now() - started;
  expect(r.headers['content-type']).toMatch(/^application\/json/); // never an event stream, even when streamed
  const error = JSON.parse(r.body).error as { message: string; code?: string; param?: string };
  return { status: r.status, message: error.message, code: error.code, param: error.param, ms };
}

describe('input limits on the real server', () => {
  it('a grammar of 60,000 nested groups (120 KB) is a 400 naming grammar and the nesting limit; the engine lives on', async () => {
    for (const stream of [false, true]) {
      const r = await refused('/v1/chat/completions', { messages: user, grammar: nestedGrammar(), max_tokens: 4, stream });
      expect(r).toMatchObject({ status: 400, code: 'grammar_too_deep', param: 'grammar' });
      expect(r.message).toBe(`grammar: nests groups 60000 levels deep; the limit is ${MAX_GRAMMAR_NESTING}`);
    }
    const c = await refused('/v1/completions', { prompt: 'x', grammar: nestedGrammar(), max_tokens: 4 });
    expect(c.status).toBe(400);
  });

  it('a 2 MB grammar of 200,000 alternatives is a 400 in well under a second, not a request held for minutes', async () => {
    const grammar = alternativesGrammar();
    const r = await refused('/v1/completions', { prompt: 'x', grammar, max_tokens: 4 });
    expect(r).toMatchObject({ status: 400, code: 'grammar_too_large', param: 'grammar' });
    expect(r.message).toBe(`grammar: is ${Buffer.byteLength(grammar)} bytes; the limit is ${MAX_GRAMMAR_BYTES} bytes`);
    // Under the byte limit, over the alternatives limit.
    const many = await refused('/v1/completions', { prompt: 'x', grammar: alternativesGrammar(20_000), max_tokens: 4, stream: true });
    expect(many).toMatchObject({ status: 400, code: 'grammar_too_large', param: 'grammar' });
    expect(many.message).toBe(`grammar: has 20000 alternatives; the limit is ${MAX_GRAMMAR_ALTERNATIVES}`);
    expect(Math.max(r.ms, many.ms)).toBeLessThan(5000); // a loaded 2-core machine; the parse itself takes milliseconds
  });

  it('a response_format schema nested 3,000 levels is a 400 naming response_format.json_schema.schema, streamed or not', async () => {
    for (const stream of [false, true]) {
      const r = await refused('/v1/chat/completions', bodyWithSchema({
        messages: user, max_tokens: 4, stream,
        response_format: { type: 'json_schema', json_schema: { name: 'deep', schema: '$SCHEMA' } },
      }, deepSchemaJson()));
      expect(r).toMatchObject({ status: 400, code: 'too_deep', param: 'response_format.json_schema.schema' });
      expect(r.message).toBe(`response_format.json_schema.schema: is nested more than ${MAX_JSON_DEPTH} levels deep`);
    }
  });

  it('a /v1/messages tool input_schema nested 3,000 levels is a 400 (Anthropic error body) naming tools[0].input_schema', async () => {
    for (const stream of [false, true]) {
      const r = await raw(srv.port, 'POST', '/v1/messages', bodyWithSchema({
        max_tokens: 4, stream, messages: user, tools: [{ name: 'deep', input_schema: '$SCHEMA' }],
      }, deepSchemaJson()));
      expect(r.status).toBe(400);
      expect(JSON.parse(r.body)).toEqual({
        type: 'error', error: { type: 'invalid_request_error', message: `tools[0].input_schema: is nested more than ${MAX_JSON_DEPTH} levels deep` },
      });
    }
  });

  it('a small schema that converts to a grammar over the limits is a 400 naming its field', async () => {
    // A 90 KB regex of 12,000 alternatives: the converter writes one grammar alternative each.
    const schema = wordsPattern;
    const r = await refused('/v1/chat/completions', {
      messages: user, max_tokens: 4, response_format: { type: 'json_schema', json_schema: { name: 'wide', schema } },
    });
    expect(r).toMatchObject({ status: 400, code: 'grammar_too_large', param: 'response_format.json_schema.schema' });
    expect(r.message).toMatch(new RegExp(`^response_format\\.json_schema\\.schema: has \\d+ alternatives; the limit is ${MAX_GRAMMAR_ALTERNATIVES}$`));
  });

  it('after all of that, the same engine process serves a constrained request', async () => {
    const r = await json(srv.port, 'POST', '/v1/completions', { prompt: 'x', grammar: 'root ::= "ok" ("!" | "?")', ...greedy(4) });
    expect(r.status).toBe(200);
    expect(r.body.choices[0].text).toMatch(/^ok[!?]$/);
    const e = (await metrics(srv.port)).engines[0];
    expect({ pid: e.pid, epoch: e.epoch }).toEqual(engine);
  });
});
