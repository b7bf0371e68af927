// Predicted outputs through the server (OpenAI's `prediction: {type: "content", content}`) on
// chat and text completions: the text is the text without a prediction (greedy), the usage says
// how much of the prediction was accepted and rejected (whole answers and the final streamed
// usage), and a bad prediction is a 400 naming the field, streamed or not.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureTestModel } from '../helpers/models.js';
import { json, startServer, stream, type Running } from './server-helpers.js';

let srv: Running;

beforeAll(async () => {
  srv = await startServer(await ensureTestModel({}), { ctx: 512 });
});
afterAll(async () => { await srv?.close(); });

type Details = { accepted_prediction_tokens: number; rejected_prediction_tokens: number };
const chat = { messages: [{ role: 'user', content: 'Rename the variable.' }], temperature: 0, max_tokens: 24, ignore_eos: true };
const completion = { prompt: 'function add(a, b) {', temperature: 0, max_tokens: 24, ignore_eos: true };
const prediction = (content: unknown) => ({ prediction: { type: 'content', content } });

describe('prediction on /v1/chat/completions', () => {
  it('keeps the greedy text, counts accepted and rejected, and has no details without a prediction', async () => {
    const plain = await json(srv.port, 'POST', '/v1/chat/completions', chat);
    expect(plain.status).toBe(200);
    const text: string = plain.body.choices[0].message.content;
    expect(plain.body.usage.completion_tokens_details).toBeUndefined();

    const same = await json(srv.port, 'POST', '/v1/chat/completions', { ...chat, ...prediction(text) });
    expect(same.body.choices[0].message.content).toBe(text);
    const d: Details = same.body.usage.completion_tokens_details;
    expect(d.accepted_prediction_tokens).toBeGreaterThan(0);
    expect(same.body.timings.draft_n).toBeGreaterThanOrEqual(d.accepted_prediction_tokens + d.rejected_prediction_tokens);

    // Longer than the answer, as text parts: the same text, the answer's length.
    const longer = await json(srv.port, 'POST', '/v1/chat/completions', { ...chat, ...prediction([{ type: 'text', text }, { type: 'text', text: `${text} and more` }]) });
    expect(longer.body.choices[0].message.content).toBe(text);
    expect(longer.body.usage.completion_tokens).toBe(plain.body.usage.completion_tokens);

    const empty = await json(srv.port, 'POST', '/v1/chat/completions', { ...chat, ...prediction('') });
    expect(empty.body.choices[0].message.content).toBe(text);
    expect(empty.body.usage.completion_tokens_details).toEqual({ accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 });

    // Text the answer never writes: verified, thrown away, the answer unchanged.
    const never = await json(srv.port, 'POST', '/v1/chat/completions', { ...chat, ...prediction('\u00a7\u00b6'.repeat(40)) });
    expect(never.body.choices[0].message.content).toBe(text);
    expect(never.body.usage.completion_tokens_details.accepted_prediction_tokens).toBe(0);
    expect(never.body.usage.completion_tokens_details.rejected_prediction_tokens).toBeGreaterThan(0);
  });

  it('streams the same text with the counts in the final usage', async () => {
    const plain = await json(srv.port, 'POST', '/v1/chat/completions', chat);
    const text: string = plain.body.choices[0].message.content;
    const s = await stream(srv.port, '/v1/chat/completions', { ...chat, ...prediction(text), stream_options: { include_usage: true } }).end;
    expect(s.how).toBe('done');
    expect(s.text).toBe(text);
    const usage = s.events.filter((e) => e.usage).at(-1).usage;
    expect(usage.completion_tokens_details.accepted_prediction_tokens).toBeGreaterThan(0);
  });
});

describe('prediction on /v1/completions', () => {
  it('keeps the greedy text, whole and streamed, with the counts', async () => {
    const plain = await json(srv.port, 'POST', '/v1/completions', completion);
    const text: string = plain.body.choices[0].text;
    const r = await json(srv.port, 'POST', '/v1/completions', { ...completion, ...prediction(text.slice(0, Math.floor(text.length / 2)) + 'xyz' + text.slice(Math.floor(text.length / 2) + 2)) });
    expect(r.body.choices[0].text).toBe(text);
    expect(r.body.usage.completion_tokens_details.accepted_prediction_tokens).toBeGreaterThan(0);
    const s = await stream(srv.port, '/v1/completions', { ...completion, ...prediction(text) }).end;
    expect(s.text).toBe(text);
    expect(s.events.at(-1).usage.completion_tokens_details.accepted_prediction_tokens).toBeGreaterThan(0);
  });
});

describe('a bad prediction', () => {
  const cases: Array<[unknown, string]> = [
    ['just text', 'prediction'],
    [{ type: 'text', content: 'x' }, 'prediction.type'],
    [{ type: 'content' }, 'prediction.content'],
    [{ type: 'content', content: 42 }, 'prediction.content'],
    [{ type: 'content', content: [{ type: 'image', text: 'x' }] }, 'prediction.content[0].type'],
    [{ type: 'content', content: [{ type: 'text', text: 5 }] }, 'prediction.content[0].text'],
  ];
  it.each(cases)('%j is a 400 naming %s, on both endpoints, streamed or not', async (bad, param) => {
    for (const [path, body] of [['/v1/chat/completions', chat], ['/v1/completions', completion]] as const) {
      const r = await json(srv.port, 'POST', path, { ...body, prediction: bad });
      expect(r.status).toBe(400);
      expect(r.body.error.param).toBe(param);
      const s = await stream(srv.port, path, { ...body, prediction: bad }).end;
      expect(s.how).toBe('error');
      expect(s.error.status).toBe(400);
      expect(s.error.error.param).toBe(param);
    }
  });
});
