// The three chat dialects (chat completions, Messages, Responses) answer recorded request bodies
// exactly as they did when the bodies were recorded: test/fixtures/chat-turn/answers.json holds
// each body with its answer, whole and streamed, normalised for what changes run to run (ids,
// timestamps, timings, prompt-cache reuse). The answers were recorded by this same file with
// STRATA_RECORD_TURNS=1 on the server before the routes became one chat turn; a change to any
// dialect's wire output fails here with the body that shows it. The engine runs ggml's haswell CPU
// variant (AVX2), which every x86-64 machine the suite runs on has: the best variant of each
// machine (AVX-512, AMX, or not) rounds otherwise, and the random-weight answers would follow it.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureTestModel } from '../helpers/models.js';
import { raw, startServer, type Running } from './server-helpers.js';

interface Recorded { name: string; path: string; body: Record<string, unknown>; status: number; answer: unknown }

const FIXTURE = join(import.meta.dirname, '../fixtures/chat-turn/answers.json');
const RECORD = process.env.STRATA_RECORD_TURNS === '1';

const weather = { name: 'get_weather', description: 'Weather in a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } };
const answerSchema = { type: 'object', properties: { answer: { type: 'string', maxLength: 12 } }, required: ['answer'], additionalProperties: false };
const user = (content: string) => ({ role: 'user', content });

/** The bodies, in order; `$RESP<i>` in a body is the id the i-th body's response got. */
const BODIES: Array<{ name: string; path: string; body: Record<string, unknown> }> = [
  { name: 'chat whole', path: '/v1/chat/completions', body: { model: 'm', temperature: 0, max_tokens: 12, messages: [{ role: 'system', content: 'Be brief.' }, user('Name a colour.')] } },
  { name: 'chat streamed, n=2, logprobs, usage', path: '/v1/chat/completions', body: { model: 'm', temperature: 0, max_tokens: 6, n: 2, logprobs: true, top_logprobs: 2, stream: true, stream_options: { include_usage: true }, messages: [user('Count.')] } },
  { name: 'chat forced tool, streamed', path: '/v1/chat/completions', body: { model: 'm', temperature: 0, max_tokens: 60, stream: true, tools: [{ type: 'function', function: weather }], tool_choice: { type: 'function', function: { name: 'get_weather' } }, messages: [user('Weather in Paris?')] } },
  { name: 'chat required tools, whole', path: '/v1/chat/completions', body: { model: 'm', temperature: 0, max_tokens: 60, tools: [{ type: 'function', function: weather }], tool_choice: 'required', messages: [user('Weather?')] } },
  { name: 'chat json schema', path: '/v1/chat/completions', body: { model: 'm', temperature: 0, max_tokens: 40, response_format: { type: 'json_schema', json_schema: { name: 'a', schema: answerSchema, strict: true } }, messages: [user('Answer in JSON.')] } },
  { name: 'chat stop and prediction', path: '/v1/chat/completions', body: { model: 'm', temperature: 0, max_tokens: 16, stop: ['\n'], prediction: { type: 'content', content: 'the colour is blue' }, messages: [user('Colour?')] } },
  { name: 'chat thinking effort', path: '/v1/chat/completions', body: { model: 'm', temperature: 0, max_tokens: 16, reasoning_effort: 'low', stream: true, messages: [user('Think.')] } },
  { name: 'messages whole', path: '/v1/messages', body: { model: 'm', temperature: 0, max_tokens: 12, system: 'Be brief.', messages: [user('Name a colour.')] } },
  { name: 'messages forced tool, streamed', path: '/v1/messages', body: { model: 'm', temperature: 0, max_tokens: 60, stream: true, tools: [{ name: weather.name, description: weather.description, input_schema: weather.parameters }], tool_choice: { type: 'tool', name: 'get_weather' }, messages: [user('Weather in Oslo?')] } },
  { name: 'messages tool result, whole', path: '/v1/messages', body: { model: 'm', temperature: 0, max_tokens: 10, stop_sequences: ['.'], tools: [{ name: weather.name, input_schema: weather.parameters }], messages: [user('Weather?'), { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Oslo' } }] }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'rain' }] }] } },
  { name: 'messages thinking, streamed', path: '/v1/messages', body: { model: 'm', temperature: 0, max_tokens: 14, stream: true, thinking: { type: 'enabled', budget_tokens: 4 }, messages: [user('Think.')] } },
  { name: 'responses whole', path: '/v1/responses', body: { model: 'm', temperature: 0, max_output_tokens: 12, instructions: 'Be brief.', input: 'Name a colour.' } },
  { name: 'responses follow-up, streamed', path: '/v1/responses', body: { model: 'm', temperature: 0, max_output_tokens: 8, stream: true, instructions: 'Be brief.', previous_response_id: '$RESP11', input: 'Another.' } },
  { name: 'responses forced tool, streamed', path: '/v1/responses', body: { model: 'm', temperature: 0, max_output_tokens: 60, stream: true, tools: [{ type: 'function', ...weather }], tool_choice: { type: 'function', name: 'get_weather' }, input: [{ role: 'user', content: 'Weather in Rome?' }] } },
  { name: 'responses json schema, not stored', path: '/v1/responses', body: { model: 'm', temperature: 0, max_output_tokens: 40, store: false, text: { format: { type: 'json_schema', name: 'a', schema: answerSchema, strict: true } }, input: 'JSON please.' } },
];

const VOLATILE = new Set(['id', 'created', 'created_at', 'call_id', 'item_id', 'previous_response_id', 'system_fingerprint', 'timings']);

/** What may differ between two runs of the same body: ids, clocks, and how much of the prompt a slot still held. */
function normalise(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(normalise);
  if (v === null || typeof v !== 'object') return v;
  const o = { ...(v as Record<string, unknown>) };
  if (typeof o.cache_read_input_tokens === 'number' && typeof o.input_tokens === 'number') {
    o.input_tokens += o.cache_read_input_tokens;
    delete o.cache_read_input_tokens;
  }
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(o)) {
    if (VOLATILE.has(k)) out[k] = typeof x === 'object' ? '<object>' : `<${k}>`;
    else if (k === 'cached_tokens') out[k] = '<cached>';
    else out[k] = normalise(x);
  }
  return out;
}

/** An answer as comparable data: the JSON body, or the stream's events (name and data) in order. */
function answerOf(r: { headers: Record<string, unknown>; body: string }): unknown {
  if (!String(r.headers['content-type'] ?? '').includes('text/event-stream')) return normalise(JSON.parse(r.body));
  return r.body.split('\n\n').filter((b) => b.trim() !== '' && !b.startsWith(':')).map((block) => {
    const event = /^event: (.*)$/m.exec(block)?.[1] ?? null;
    const data = block.split('\n').filter((l) => l.startsWith('data: ')).map((l) => l.slice(6)).join('\n');
    return { event, data: data === '[DONE]' ? data : normalise(JSON.parse(data)) };
  });
}

function responseId(r: { body: string }): string | null {
  const m = /"id":\s*"(resp_[A-Za-z0-9_-]+)"/.exec(r.body);
  return m?.[1] ?? null;
}

describe('recorded chat bodies: every dialect answers as recorded', () => {
  let srv: Running;
  const answers: Recorded[] = [];
  beforeAll(async () => {
    srv = await startServer(await ensureTestModel({}), { ctx: 1024, slots: 2, cpuVariant: 'haswell' });
    const ids: Array<string | null> = [];
    for (const { name, path, body } of BODIES) {
      const sent = JSON.parse(JSON.stringify(body).replace(/"\$RESP(\d+)"/g, (_, i: string) => JSON.stringify(ids[Number(i)]))) as Record<string, unknown>;
      const r = await raw(srv.port, 'POST', path, sent);
      ids.push(responseId(r));
      answers.push({ name, path, body, status: r.status, answer: answerOf(r) });
    }
    if (RECORD) writeFileSync(FIXTURE, `${JSON.stringify(answers, null, 1)}\n`);
  }, 600_000);
  afterAll(async () => { await srv?.close(); });

  const recorded = existsSync(FIXTURE) ? JSON.parse(readFileSync(FIXTURE, 'utf8')) as Recorded[] : [];
  it('replays the bodies that were recorded', () => {
    expect(recorded.map((r) => r.name)).toEqual(BODIES.map((b) => b.name));
    expect(recorded.map((r) => r.body)).toEqual(BODIES.map((b) => b.body));
  });
  for (const [i, rec] of recorded.entries()) {
    it(`${rec.name}: ${rec.path} answers as recorded`, () => {
      expect(rec.status).toBe(200);
      expect({ status: answers[i]!.status, answer: answers[i]!.answer }).toEqual({ status: rec.status, answer: rec.answer });
    });
  }
});
