// The bench client against a local node:http server that writes known SSE bytes (split at
// awkward places) — checks parsing, token counting and error reporting, not any engine.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BenchHttpError, infill, scrapePromptComputed, streamCompletion, type Target } from '../../backend/bench/client.js';
import { complete, emptyRun } from '../../backend/bench/scenarios/common.js';
import { defaultSettings, type BenchContext } from '../../backend/bench/types.js';

let server: Server;
let target: Target;
const bodies: Record<string, unknown>[] = [];
let metricsBody: { type: string; text: string } = { type: 'application/json', text: '{}' };

const chunk = (o: unknown) => `data: ${JSON.stringify(o)}\n\n`;

beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.method === 'GET' && req.url?.startsWith('/metrics')) {
      res.writeHead(200, { 'content-type': metricsBody.type });
      res.end(metricsBody.text);
      return;
    }
    let raw = '';
    req.on('data', (d) => { raw += d; });
    req.on('end', () => {
      const body = JSON.parse(raw) as Record<string, unknown>;
      bodies.push(body);
      if (req.url === '/infill') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ content: 'x', tokens_predicted: 3, tokens_evaluated: 40, timings: { cache_n: 30, prompt_n: 10 } }));
        return;
      }
      if (body.prompt === 'bad') { res.writeHead(400, { 'content-type': 'application/json' }); res.end('{"error":"max_tokens: must be positive"}'); return; }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      if (body.prompt === 'midstream-error') { res.end(chunk({ error: { message: 'engine died' } })); return; }
      if (body.prompt === 'first-token-refused') {
        res.end(chunk({ error: { code: 500, message: 'The model produced output that does not match the expected Content-only format' } }));
        return;
      }
      if (body.prompt === 'late-error') {
        res.end(chunk({ choices: [{ text: 'A', index: 0, finish_reason: null }] }) + chunk({ choices: [{ text: 'B', index: 0, finish_reason: null }] })
          + chunk({ error: { code: 500, message: 'bad utf-8' } }));
        return;
      }
      const wire = ': keep-alive\n\n' + chunk({ choices: [{ text: 'He', index: 0, finish_reason: null }] })
        + chunk({ choices: [{ text: '', index: 0, finish_reason: null }] })
        + chunk({ choices: [{ text: 'llo', index: 0, finish_reason: null }] })
        + chunk({ choices: [{ text: '', index: 0, finish_reason: 'length' }], usage: { prompt_tokens: 12, completion_tokens: 4, prompt_tokens_details: { cached_tokens: 2 } }, timings: { cache_n: 5, predicted_n: 4 } })
        + 'data: [DONE]\n\n';
      // Written in 7-byte pieces so events and lines straddle network chunks.
      for (let i = 0; i < wire.length; i += 7) res.write(wire.slice(i, i + 7));
      res.end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  target = { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, model: 'm' };
});

afterAll(() => new Promise<void>((r) => server.close(() => r())));

describe('bench client', () => {
  it('reads a streamed completion: text, tokens from usage, cache from timings, keep-alives', async () => {
    const r = await streamCompletion(target, { prompt: 'hi', maxTokens: 4, ignoreEos: true });
    expect(r.text).toBe('Hello');
    expect(r.textEvents).toBe(2);
    expect(r.completionTokens).toBe(4);
    expect(r.completionTokensSource).toBe('usage');
    expect(r.promptTokens).toBe(12);
    expect(r.cachedTokens).toBe(5);
    expect(r.finishReason).toBe('length');
    expect(r.keepAlives).toBe(1);
    expect(r.ttftMs).toBeGreaterThan(0);
    expect(r.ttftMs).toBeLessThanOrEqual(r.lastTextMs);
    expect(r.lastTextMs).toBeLessThanOrEqual(r.totalMs);
    const sent = bodies.at(-1)!;
    expect(sent).toMatchObject({ prompt: 'hi', max_tokens: 4, stream: true, ignore_eos: true, temperature: 0, model: 'm' });
  });

  it('sends no ignore_eos when the server does not take it', async () => {
    await streamCompletion(target, { prompt: 'hi', maxTokens: 2, ignoreEos: false });
    expect(bodies.at(-1)).not.toHaveProperty('ignore_eos');
  });

  it('reports an HTTP error with its status and body', async () => {
    const err = await streamCompletion(target, { prompt: 'bad', maxTokens: 1, ignoreEos: false }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BenchHttpError);
    expect((err as BenchHttpError).status).toBe(400);
    expect((err as Error).message).toContain('max_tokens: must be positive');
  });

  it('fails on an error event inside the stream', async () => {
    await expect(streamCompletion(target, { prompt: 'midstream-error', maxTokens: 1, ignoreEos: false })).rejects.toThrow(/engine died/);
  });

  it('keeps the timings of a stream that fails after its first token, counting tokens from events', async () => {
    const r = await streamCompletion(target, { prompt: 'late-error', maxTokens: 8, ignoreEos: true });
    expect(r.streamError).toMatch(/bad utf-8/);
    expect(r.text).toBe('AB');
    expect(r.completionTokens).toBe(2);
    expect(r.completionTokensSource).toBe('events');
    expect(r.ttftMs).toBeLessThanOrEqual(r.totalMs);
  });

  it("takes llama-server's refusal of a first token as that token, and any other early error as a failure", async () => {
    const r = await streamCompletion(target, { prompt: 'first-token-refused', maxTokens: 8, ignoreEos: true });
    expect(r.streamError).toMatch(/produced output/);
    expect(r.completionTokens).toBe(1);
    expect(r.ttftMs).toBeGreaterThan(0);
    expect(r.ttftMs).toBe(r.totalMs);
    await expect(streamCompletion(target, { prompt: 'midstream-error', maxTokens: 1, ignoreEos: false })).rejects.toThrow(/engine died/);
  });

  it('reads the prompt tokens a server computed: ours from its JSON /metrics, llama-server\'s from Prometheus text', async () => {
    metricsBody = { type: 'application/json', text: JSON.stringify({ totals: { prompt_tokens_computed: 4321, prompt_tokens_processed: 9 } }) };
    expect(await scrapePromptComputed(target)).toBe(4321);
    metricsBody = { type: 'text/plain', text: '# HELP llamacpp:prompt_tokens_total x\n# TYPE llamacpp:prompt_tokens_total counter\nllamacpp:prompt_tokens_total 2177\nllamacpp:n_decode_total 9\n' };
    expect(await scrapePromptComputed(target)).toBe(2177);
    metricsBody = { type: 'text/plain', text: 'something else 1\n' };
    expect(await scrapePromptComputed(target)).toBeNull();
  });

  it('counts how each request ended: completed, an HTTP error, a stream cut by an error (its tokens delivered); bans tokens on every request', async () => {
    const ctx = { target, info: { ignoreEos: true }, settings: defaultSettings, bannedTokens: [5, 7] } as unknown as BenchContext;
    const out = emptyRun();
    const ok = await complete(ctx, 'hi', 4, out);
    const bad = await complete(ctx, 'bad', 4, out);
    const cut = await complete(ctx, 'late-error', 8, out);
    expect([ok.failed, bad.failed !== null, cut.failed]).toEqual([null, true, expect.stringMatching(/bad utf-8/)]);
    expect(Number.isNaN(bad.ttftMs)).toBe(true);
    expect(out.requests).toMatchObject({ sent: 3, completed: 1, failed: 2, deliveredTokens: 4 + 0 + 2 });
    expect(out.requests.failures[0]).toMatch(/HTTP 400/);
    expect(bodies.at(-1)).toMatchObject({ logit_bias: [[5, false], [7, false]] });
  });

  it('reads an infill answer', async () => {
    const r = await infill(target, '/infill', { prefix: 'a', suffix: 'b', maxTokens: 3, ignoreEos: true });
    expect(r).toMatchObject({ tokens: 3, promptTokens: 40, cachedTokens: 30 });
    expect(r.latencyMs).toBeGreaterThan(0);
    expect(bodies.at(-1)).toMatchObject({ input_prefix: 'a', input_suffix: 'b', n_predict: 3, ignore_eos: true });
  });
});
