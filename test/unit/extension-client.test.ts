import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChatChunkAssembler } from '../../extension/client/chat-stream.js';
import { normalizeBaseUrl, StrataApiError, StrataClient, type ChatEvent } from '../../extension/client/client.js';
import { ContractError } from '../../contract/check.js';
import { parseDevices, parseDevicesAndFit } from '../../contract/devices.js';
import { parseMetrics } from '../../contract/metrics.js';
import { parseSessions } from '../../contract/sessions.js';
import { parseTraces } from '../../contract/traces.js';
import { parseHealth, parseModels } from '../../extension/client/normalize.js';
import { devicesBody, engineBody, historyEntry, metricsBody, replicaDevices, sessionMeta, traceEntry } from '../helpers/contract-bodies.js';
import { SseDecoder } from '../../common/net/sse-decoder.js';
import type { ChatStreamEvent } from '../../extension/client/types.js';
import { ActivityTracker } from '../../extension/server/activity.js';

describe('SseDecoder', () => {
  it('splits events across arbitrary chunk boundaries and skips comments', () => {
    const text = ': keep-alive\n\ndata: {"a":1}\r\n\r\ndata: x\ndata: y\n\ndata: [DONE]\n\n';
    for (let cut = 0; cut <= text.length; cut++) {
      const d = new SseDecoder();
      const out = [...d.feed(text.slice(0, cut)), ...d.feed(text.slice(cut)), ...d.end()].map((e) => e.data);
      expect(out, `cut at ${cut}`).toEqual(['{"a":1}', 'x\ny', '[DONE]']);
    }
  });
  it('keeps multi-byte characters split across chunks intact', () => {
    const bytes = new TextEncoder().encode('data: héllo ✓\n\n');
    const d = new SseDecoder();
    expect([...d.feed(bytes.subarray(0, 8)), ...d.feed(bytes.subarray(8))].map((e) => e.data)).toEqual(['héllo ✓']);
  });
});

describe('ChatChunkAssembler', () => {
  it('emits text, whole tool calls assembled from deltas, then one done with usage and timings', () => {
    const a = new ChatChunkAssembler();
    const ev: ChatStreamEvent[] = [
      ...a.push({ choices: [{ delta: { role: 'assistant' } }] }),
      ...a.push({ choices: [{ delta: { content: 'Let me check.' } }] }),
      ...a.push({ choices: [{ delta: { tool_calls: [{ index: 0, id: 'call_1', function: { name: 'get_weather', arguments: '{"ci' } }] } }] }),
      ...a.push({ choices: [{ delta: { tool_calls: [{ index: 0, function: { arguments: 'ty":"Oslo"}' } }] } }] }),
      ...a.push({ choices: [{ delta: {}, finish_reason: 'tool_calls' }] }),
      ...a.push({ choices: [], usage: { prompt_tokens: 9, completion_tokens: 4, prompt_tokens_details: { cached_tokens: 6 } }, timings: { predicted_per_second: 20, prompt_ms: 3 } }),
      ...a.end(),
      ...a.end(),
    ];
    expect(ev).toEqual([
      { type: 'text', text: 'Let me check.' },
      { type: 'toolCall', call: { id: 'call_1', name: 'get_weather', arguments: '{"city":"Oslo"}' } },
      { type: 'done', finishReason: 'tool_calls', usage: { promptTokens: 9, completionTokens: 4, cachedTokens: 6 }, timings: { promptMs: 3, predictedMs: null, predictedPerSecond: 20, promptPerSecond: null } },
    ]);
  });
  it('turns an error event into an exception', () => {
    expect(() => new ChatChunkAssembler().push({ error: { message: 'engine died' } })).toThrow('engine died');
  });
});

describe('normalize', () => {
  it('reads health states and models', () => {
    expect(parseHealth(503, { status: 'loading' }).status).toBe('loading');
    expect(parseHealth(200, { status: 'ok', model: 'tiny', slots: 2 })).toEqual({ status: 'ok', model: 'tiny', slots: 2, reason: null, loadTimeoutMs: null, engineDeath: null });
    expect(parseHealth(503, { status: 'loading', load_timeout_ms: 900000 })).toMatchObject({ status: 'loading', loadTimeoutMs: 900000 });
    expect(parseModels({ data: [{ id: 'm', meta: { n_ctx: 4096 } }] })).toEqual([{ id: 'm', contextLength: 4096, maxOutputTokens: null, toolCalling: true }]);
  });
  it('keeps figures the server did not report as null and reads the documented metrics shape', () => {
    const m = parseMetrics(metricsBody({
      live: { state: 'reading', queued: 1, running: 2, slots: [{ replica: 0, slot: 0, state: 'decoding', held_tokens: 40, request_id: 9, prompt_tokens: 30, prompt_read: 30, generated: 10, tok_s: 12.5 }] },
      requests: [historyEntry({ id: 8, prompt_tokens: 10, reused: 4, output_tokens: 3, prompt_ms: 5, decode_ms: null })],
      conversation_cache: { parked: 1, bytes: 2048, budget: 4096, hits: 3, misses: 1, evictions: 0, refused_low_ram: 0, entries: [] },
      engines: [engineBody({ replica: 0, epoch: 2, pid: 77, alive: true, restarts: 1, devices: [{ device: 'CPU', layers: 24, memory_free: 1, memory_total: 2 }] })],
    }));
    expect(m.slots[0]).toEqual({ slot: 0, replica: 0, state: 'decoding', heldTokens: 40, requestId: '9', tokS: 12.5 });
    expect(m.requests[0]).toMatchObject({ promptTokens: 10, reusedTokens: 4, outputTokens: 3, promptMs: 5, decodeMs: null, decodeTokS: null });
    expect(m.cache).toEqual({ parked: 1, bytes: 2048, budget: 4096, hits: 3, misses: 1, evictions: 0 });
    expect(m.engines[0]).toEqual({ replica: 0, epoch: 2, pid: 77, alive: true, restarts: 1, devices: ['CPU'] });
    expect([m.queued, m.running]).toEqual([1, 2]);
  });
  it('refuses a Strata body that lacks a field of the contract, naming it (no figure silently 0)', () => {
    const body = metricsBody() as unknown as { live: Record<string, unknown> };
    const { admitting: _gone, ...renamed } = body.live;
    expect(() => parseMetrics({ ...body, live: { ...renamed, admitted: 0 } })).toThrow(ContractError);
    expect(() => parseMetrics({ ...body, live: { ...renamed, admitted: 0 } })).toThrow('GET /metrics: the server\'s answer does not match this extension\'s contract: live.admitting: expected number, got undefined');
    expect(() => parseSessions({ object: 'list', data: [{ name: 'x', tokens: '5' }] })).toThrow(/GET \/v1\/sessions: .*data\.0/);
  });
  it('puts the engine\'s trace on the server\'s clock and lists requests oldest first', () => {
    const t = parseTraces({
      object: 'list',
      requests: [
        traceEntry({ id: 12, kind: 'chat', replica: 0, slot: 1, finish: 'stop', error: null, accepted: '2025-01-01T00:00:01.000Z', prompt_tokens: 40, reused: 8, restored: false, generated: 5,
          marks: { dispatched: 2, admitted: 3, first_token: 30, engine_done: 49, ended: 50 },
          engine: { id: 3, queued: 1000, admitted: 1001, promptDone: 1020, firstToken: 1027, finished: 1046, slot: 1, reused: 8, restored: false, promptLegs: [{ t: 1001, tokens: 32, ms: 19 }], drafted: 0, accepted: 0, choices: 1 } }),
        traceEntry({ id: 11, kind: 'infill', replica: 0, slot: 0, finish: 'stop', accepted: '2025-01-01T00:00:00.000Z', marks: { dispatched: 1, admitted: 2, first_token: null, engine_done: null, ended: 9 }, engine: null }),
      ],
      steps: [{ step: 2, t: 1002, buildMs: 0.1, decodeMs: 3, sampleMs: 0.2, detokMs: 0.05, decodeTokens: 1, promptTokens: 32, sequences: 2, draftTokens: 0, acceptedTokens: 0, draftMs: 0, replica: 0, epoch: 1 }],
    });
    expect(t.requests.map((r) => r.id)).toEqual(['11', '12']);
    expect(t.requests[1]).toMatchObject({ dispatched: 2, admitted: 3, promptDone: 22, firstToken: 30, finished: 50, reused: 8, promptLegs: [{ t: 3, tokens: 32, ms: 19 }] });
    expect(t.requests[0]).toMatchObject({ kind: 'infill', admitted: 2, firstToken: null, finished: 9, promptLegs: [] });
    expect(t.steps[0]).toMatchObject({ step: 2, decodeMs: 3, promptTokens: 32 });
  });
  it('reads devices per replica with the layers placed on them, and session metadata', () => {
    const d = parseDevices(devicesBody([
      replicaDevices({ replica: 0, state: 'ready', devices: [{ name: 'CPU', description: 'AMD', type: 'cpu', backend: 'CPU', memory_free: 10, memory_total: 20 }], placement: [{ device: 'CPU', layers: 24, memory_free: 10, memory_total: 20 }] }),
      replicaDevices({ replica: 1, state: 'starting', devices: [], placement: [{ device: 'CUDA0', layers: 12, memory_free: 1, memory_total: 2 }] }),
    ]));
    expect(d).toEqual([
      { name: 'CPU', description: 'AMD', type: 'cpu', replica: 0, memoryFree: 10, memoryTotal: 20, layers: 24, planned: null },
      { name: 'CUDA0', description: '', type: '', replica: 1, memoryFree: 1, memoryTotal: 2, layers: 12, planned: null },
    ]);
    const s = parseSessions({ object: 'list', data: [sessionMeta({ name: 'work', model: { name: 'tiny', file: 'tiny.gguf', identity: 'x' }, tokens: 40, bytes: 900, created: '2025-01-02T03:04:05.000Z', messages: [{ role: 'user', content: 'a' }, { role: 'assistant', content: 'b' }], message_count: 2 })] });
    expect(s).toEqual([{ name: 'work', tokens: 40, bytes: 900, model: 'tiny', savedAt: Date.UTC(2025, 0, 2, 3, 4, 5), path: null, messages: 2 }]);
  });
  it('reads a replica\'s fit: what the plan puts on each device, KV per slot, what stays free, and what would fit', () => {
    const MiB = 2 ** 20;
    const use = (device: string, layers: number, free: number, model: number, context: number, compute: number) =>
      ({ device, layers, free: free * MiB, total: 2048 * MiB, model: model * MiB, context: context * MiB, compute: compute * MiB });
    const body = devicesBody([replicaDevices({
      replica: 0,
      devices: [
        { name: 'Vulkan0', description: 'llvmpipe', type: 'gpu', backend: 'Vulkan', memory_free: 2048 * MiB, memory_total: 2048 * MiB },
        { name: 'CPU', description: 'AMD', type: 'cpu', backend: 'CPU', memory_free: 8192 * MiB, memory_total: 8192 * MiB },
      ],
      placement: [{ device: 'Vulkan0', layers: 19, memory_free: 2048 * MiB, memory_total: 2048 * MiB }, { device: 'CPU', layers: 5, memory_free: 1, memory_total: 1 }],
      fit: {
        status: 'adjusted', gpu_layers: 19, n_layer: 24, ctx: 32768, slots: 4, kv_type: 'f16', margin_bytes: 256 * MiB,
        devices: [use('Vulkan0', 19, 2048, 512, 1152, 41)], host: use('Host', 5, 6000, 430, 384, 1860),
        changes: ['gpuLayers 25 -> 19 (of 25; the rest on the CPU)'], reason: null,
        suggestions: [{ change: 'slots 2', slots: 2, ctx: 32768, kv_type: 'f16', gpu_layers: 25 }, { change: 'kvType q8_0', slots: 4, ctx: 32768, kv_type: 'q8_0', gpu_layers: 25 }],
      },
    })]);
    const { devices, fit } = parseDevicesAndFit(body);
    expect(devices[0]!.planned).toEqual({ bytes: 1705 * MiB, kvPerSlot: 288 * MiB, margin: 343 * MiB });
    expect(devices[1]!.planned).toEqual({ bytes: 2674 * MiB, kvPerSlot: 96 * MiB, margin: (6000 - 2674) * MiB });
    expect(fit).toEqual([{
      replica: 0, status: 'adjusted', summary: '19 of 25 layers on Vulkan0 · ctx 32768 × 4 slots · f16 KV',
      changes: ['gpuLayers 25 -> 19 (of 25; the rest on the CPU)'], reason: null, suggestions: ['slots 2', 'KV q8_0'],
    }]);
    expect(parseDevicesAndFit(devicesBody([replicaDevices({ replica: 0 })])).fit).toEqual([]);
    const bad = devicesBody([replicaDevices({ replica: 0, fit: { ...body.data[0]!.fit!, status: 'squeezed' as never } })]);
    expect(() => parseDevicesAndFit(bad)).toThrow(/data\.0\.fit\.status/);
  });
  it('normalises base URLs', () => {
    expect(normalizeBaseUrl('http://h:1/v1/')).toBe('http://h:1');
    expect(normalizeBaseUrl(' http://h:1 ')).toBe('http://h:1');
  });
});

describe('StrataClient over HTTP', () => {
  let server: Server;
  let base = '';
  let closedEarly = 0;
  const auth: Array<string | undefined> = [];
  const bodies: Array<Record<string, unknown>> = [];
  beforeAll(async () => {
    server = createServer((req, res) => {
      auth.push(req.headers.authorization);
      let body = '';
      req.on('data', (c) => { body += c; });
      req.on('end', () => {
        if (body) bodies.push(JSON.parse(body) as Record<string, unknown>);
        if (req.url === '/v1/chat/completions') {
          const j = JSON.parse(body) as { messages: Array<{ content: string }> };
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          res.write(': keep-alive\n\n');
          res.write(`data: ${JSON.stringify({ choices: [{ delta: { content: `echo ${j.messages.at(-1)!.content}` } }] })}\n\n`);
          if (j.messages.at(-1)!.content === 'slow') {
            res.on('close', () => { closedEarly++; });
            return; // never finishes: the client must cancel
          }
          res.write(`data: ${JSON.stringify({ choices: [{ delta: {}, finish_reason: 'stop' }], usage: { prompt_tokens: 3, completion_tokens: 2 } })}\n\n`);
          res.end('data: [DONE]\n\n');
        } else if (req.url === '/v1/infill') {
          const j = JSON.parse(body) as { input_prefix: string; input_extra: unknown[]; max_tokens: number; supersede_key?: string };
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ content: `[${j.input_prefix}|${j.input_extra.length}|${j.max_tokens}${j.supersede_key ? `|${j.supersede_key}` : ''}]` }));
        } else if (req.url === '/v1/embeddings') {
          res.writeHead(400, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ error: { message: 'input is too long', type: 'invalid_request_error', code: 'context_length_exceeded', param: 'input', n_prompt_tokens: 900, n_ctx: 512 } }));
        } else if (req.url === '/v1/tokenize') {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ tokens: (JSON.parse(body) as { content: string }).content.split(' ').map((_, i) => i) }));
        } else {
          res.writeHead(400, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ error: { message: "messages[0].role: unknown role 'x'", type: 'invalid_request_error', code: 400 } }));
        }
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const a = server.address();
    base = `http://127.0.0.1:${typeof a === 'object' && a ? a.port : 0}/v1`;
  });
  afterAll(() => { server.closeAllConnections(); server.close(); });

  it('streams a chat answer, sends the key, and tracks activity', async () => {
    const activity = new ActivityTracker();
    const changes: boolean[] = [];
    activity.onChange((b) => changes.push(b));
    const c = new StrataClient({ baseUrl: base, apiKey: 'k1', activity });
    const events: ChatEvent[] = [];
    for await (const e of c.chatStream({ messages: [{ role: 'user', content: 'hi' }] }, new AbortController().signal)) events.push(e);
    expect(events.map((e) => e.type)).toEqual(['text', 'done']);
    expect(events[0]).toEqual({ type: 'text', text: 'echo hi' });
    expect(auth.at(-1)).toBe('Bearer k1');
    expect(changes).toEqual([true, false]);
  });

  it('aborting a stream closes the connection (the server frees the slot)', async () => {
    const c = new StrataClient({ baseUrl: base });
    const ac = new AbortController();
    const got: string[] = [];
    const closed = new Promise<void>((resolve) => server.once('request', (_req, res) => res.on('close', () => resolve())));
    await expect((async () => {
      for await (const e of c.chatStream({ messages: [{ role: 'user', content: 'slow' }] }, ac.signal)) {
        if (e.type === 'text') { got.push(e.text); ac.abort(); }
      }
    })()).rejects.toThrow();
    await closed;
    expect(got).toEqual(['echo slow']);
    expect(closedEarly).toBe(1);
  });

  it('sends infill in llama-server shape and counts tokens', async () => {
    const c = new StrataClient({ baseUrl: base });
    const r = await c.infill({ prefix: 'def f(', suffix: ')', extra: [{ filename: 'a.py', text: 'x' }], maxTokens: 16, maxPredictMs: 500 }, new AbortController().signal);
    expect(r.content).toBe('[def f(|1|16]');
    const keyed = await c.infill({ prefix: 'x', suffix: '', extra: [], maxTokens: 4, maxPredictMs: 500, supersedeKey: 'file:///a.py' }, new AbortController().signal);
    expect(keyed.content).toBe('[x|0|4|file:///a.py]');
    expect(await c.tokenize('a b c')).toEqual([0, 1, 2]);
  });

  it('sends the completion model\'s name with infill and the chat model\'s with chat (none set: the server\'s default)', async () => {
    const c = new StrataClient({ baseUrl: base, models: { completion: 'coder', chat: 'instruct' } });
    await c.infill({ prefix: 'x', suffix: '', extra: [], maxTokens: 4, maxPredictMs: 500 }, new AbortController().signal);
    expect(bodies.at(-1)!.model).toBe('coder');
    for await (const _ of c.chatStream({ messages: [{ role: 'user', content: 'hi' }] }, new AbortController().signal)) { /* drain */ }
    expect(bodies.at(-1)!.model).toBe('instruct');
    const plain = new StrataClient({ baseUrl: base });
    await plain.infill({ prefix: 'x', suffix: '', extra: [], maxTokens: 4, maxPredictMs: 500 }, new AbortController().signal);
    expect(bodies.at(-1)!).not.toHaveProperty('model');
  });

  it('turns an OpenAI error body into an error naming the problem', async () => {
    const c = new StrataClient({ baseUrl: base });
    const err = await c.sessions().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StrataApiError);
    expect((err as StrataApiError).message).toBe("messages[0].role: unknown role 'x'");
    expect((err as StrataApiError).status).toBe(400);
  });

  it('carries a context overflow\'s numbers as fields', async () => {
    const c = new StrataClient({ baseUrl: base });
    const err = await c.embeddings(['a long text']).catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 400, code: 'context_length_exceeded', param: 'input', overflow: { n_prompt_tokens: 900, n_ctx: 512 } });
    const other = await c.sessions().catch((e: unknown) => e);
    expect((other as StrataApiError).overflow).toBeNull();
  });

  it('says which server it could not reach', async () => {
    // A port that was free a moment ago: nothing listens there.
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
    const a = probe.address();
    const port = typeof a === 'object' && a ? a.port : 0;
    await new Promise<void>((r) => probe.close(() => r()));
    const c = new StrataClient({ baseUrl: `http://127.0.0.1:${port}` });
    await expect(c.health()).rejects.toThrow(`cannot reach the Strata server at http://127.0.0.1:${port} (ECONNREFUSED)`);
  });
});
