// renderTokens without a model: the protocol check of the submit field, the marker table kept
// in step with the tool-call parser, the per-model marker ids, and the chat route passing them
// to the engine only when tools are on (scripted engine that tokenizes markers as one token).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import type { ModelInfo } from '../../native/lib/addon.js';
import { ToolCallStreamParser } from '../../backend/chat/tool-calls.js';
import type { ToolCallFormat } from '../../backend/chat/chat-types.js';
import { parseCommand, submitRequestProblem } from '../../backend/engine/protocol.js';
import { silentLogger } from '../../backend/log/logger.js';
import { StrataServer } from '../../backend/app/app.js';
import { defaultConfig } from '../../backend/app/config.js';
import { TOOL_MARKER_TEXTS } from '../../backend/chat/tool-calls.js';
import { toolMarkerTokenIds } from '../../backend/served-model/model-view.js';
import { FakeEngineClient } from '../helpers/fake-engine-client.js';

const FIXTURES = new URL('../fixtures/templates/', import.meta.url);
const template = (name: string): string => readFileSync(new URL(name, FIXTURES), 'utf8');

describe('submitRequestProblem (engine protocol)', () => {
  it('accepts a request without renderTokens or with token ids', () => {
    expect(submitRequestProblem({ prompt: [1, 2], maxTokens: 4 })).toBeNull();
    expect(submitRequestProblem({ prompt: [1], maxTokens: 1, renderTokens: [] })).toBeNull();
    expect(submitRequestProblem({ prompt: [1], maxTokens: 1, renderTokens: [0, 128010] })).toBeNull();
  });

  it.each([
    ['a number', 5, 'got 5'],
    ['a string', 'x', 'got "x"'],
    ['a negative id', [3, -1], 'got [3,-1]'],
    ['a fractional id', [1.5], 'got [1.5]'],
    ['a string id', ['<|python_tag|>'], 'got ["<|python_tag|>"]'],
    ['an Int32Array', new Int32Array([1]), 'got {"0":1}'],
  ])('refuses %s, naming the field and the value', (_what, value, got) => {
    const problem = submitRequestProblem({ prompt: [1], maxTokens: 1, renderTokens: value });
    expect(problem).toBe(`submit request: 'renderTokens' must be an array of non-negative integer token ids, ${got}`);
  });

  it('shortens a long bad value in the message', () => {
    const problem = submitRequestProblem({ renderTokens: Array.from({ length: 1000 }, () => -1) })!;
    expect(problem.length).toBeLessThan(200);
  });

  it('parseCommand leaves the field to the host, so a bad one is answered for its id, not dropped', () => {
    const cmd = { kind: 'submit', epoch: 1, id: 3, request: { prompt: [1], maxTokens: 1, renderTokens: 'x' } };
    expect(parseCommand(cmd)).toBe(cmd);
  });
});

describe('tool-call marker texts', () => {
  const CALLS: Record<Exclude<ToolCallFormat, 'none'>, string> = {
    hermes: '<tool_call>{"name": "f", "arguments": {"a": 1}}</tool_call>',
    llama3: '<|python_tag|>{"name": "f", "parameters": {"a": 1}}',
    mistral: '[TOOL_CALLS]f[CALL_ID]abc123XYZ[ARGS]{"a": 1}',
  };

  it.each(Object.keys(CALLS) as Array<keyof typeof CALLS>)('%s: every marker text is one the parser needs for a call', (format) => {
    const call = CALLS[format];
    for (const marker of TOOL_MARKER_TEXTS[format]) expect(call).toContain(marker);
    const parser = new ToolCallStreamParser(format);
    const deltas = [...parser.push(`Sure. ${call}`), ...parser.end()];
    expect(parser.calls.map((c) => [c.function.name, JSON.parse(c.function.arguments)])).toEqual([['f', { a: 1 }]]);
    expect(deltas.filter((d) => d.type === 'content').map((d) => d.type === 'content' && d.text).join('')).toBe('Sure.');
    // Without the marker texts (what the engine emits for unrendered control tokens) there is no call.
    const bare = new ToolCallStreamParser(format);
    let hidden = call;
    for (const marker of TOOL_MARKER_TEXTS[format]) hidden = hidden.replaceAll(marker, '');
    bare.push(hidden);
    bare.end();
    // llama3 also takes a bare JSON call at the start of a message, marker or not.
    if (format !== 'llama3') expect(bare.calls).toEqual([]);
  });

  it('toolMarkerTokenIds keeps the markers that are one token, once each', async () => {
    const vocab: Record<string, number[]> = { '[TOOL_CALLS]': [9], '[CALL_ID]': [1, 2, 3], '[ARGS]': [9] };
    const asked: string[] = [];
    const ids = await toolMarkerTokenIds('mistral', async (t) => { asked.push(t); return vocab[t] ?? []; });
    expect(asked).toEqual(['[TOOL_CALLS]', '[CALL_ID]', '[ARGS]']);
    expect(ids).toEqual([9]);
    expect(await toolMarkerTokenIds('none', async () => [1])).toEqual([]);
  });
});

/** A scripted engine serving `chatTemplate` whose tokenizer knows the markers as single tokens. */
class MarkerEngine extends FakeEngineClient {
  readonly tokenizeCalls: Array<{ text: string; addSpecial?: boolean; parseSpecial?: boolean }> = [];
  constructor(replica: number, private readonly chatTemplate: string, private readonly special: Record<string, number>) {
    super({ replica, slots: 2, ctx: 8192, autoRun: { tokens: 2 } });
  }
  override async start(): Promise<ModelInfo> {
    const info = await super.start();
    info.chatTemplate = this.chatTemplate;
    return info;
  }
  override async tokenize(text: string, addSpecial?: boolean, parseSpecial?: boolean): Promise<number[]> {
    this.tokenizeCalls.push({ text, addSpecial, parseSpecial });
    const id = parseSpecial ? this.special[text] : undefined;
    return id !== undefined ? [id] : super.tokenize(text);
  }
}

describe('chat route: renderTokens for the template\'s tool markers', () => {
  const running: Array<{ server: StrataServer; dir: string }> = [];
  afterEach(async () => {
    for (const r of running.splice(0)) {
      await r.server.close();
      rmSync(r.dir, { recursive: true, force: true });
    }
  });

  async function serve(chatTemplate: string, special: Record<string, number>) {
    const dir = mkdtempSync(join(tmpdir(), 'strata-render-tokens-'));
    const modelPath = join(dir, 'fake.gguf');
    writeFileSync(modelPath, 'scripted engine: never read');
    const fakes: MarkerEngine[] = [];
    const server = new StrataServer({
      config: { ...defaultConfig(), port: 0, sessionsDir: dir }, modelPath, log: silentLogger,
      engineFactory: (replica) => { const f = new MarkerEngine(replica, chatTemplate, special); fakes.push(f); return f; },
    });
    running.push({ server, dir });
    const { url } = await server.listen();
    await server.startEngines();
    return { fakes, openai: new OpenAI({ baseURL: `${url}/v1`, apiKey: 'unused', maxRetries: 0 }) };
  }

  const tools = [{ type: 'function' as const, function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }];
  const messages = [{ role: 'user' as const, content: 'Weather in Paris?' }];

  it('llama3 template: passes the <|python_tag|> id with tools, nothing without', async () => {
    const { fakes, openai } = await serve(template('meta-llama-Llama-3.1-8B-Instruct.jinja'), { '<|python_tag|>': 200 });
    // Looked up once at model load, with special-token parsing and no BOS.
    expect(fakes[0]!.tokenizeCalls).toContainEqual({ text: '<|python_tag|>', addSpecial: false, parseSpecial: true });

    await openai.chat.completions.create({ model: 'x', messages, tools });
    await openai.chat.completions.create({ model: 'x', messages });
    await openai.chat.completions.create({ model: 'x', messages, tools, tool_choice: 'none' });
    await openai.chat.completions.create({ model: 'x', messages, tools, stream: true }).then(async (s) => { for await (const _ of s); });
    const inputs = fakes[0]!.all.map((r) => r.input.renderTokens);
    expect(inputs).toEqual([[200], undefined, undefined, [200]]);
  });

  it('mistral template: passes the one-token markers ([TOOL_CALLS]) and skips those spelled with several', async () => {
    const { fakes, openai } = await serve(template('mistralai-Mistral-Nemo-Instruct-2407.jinja'), { '[TOOL_CALLS]': 5 });
    await openai.chat.completions.create({ model: 'x', messages, tools });
    await openai.chat.completions.create({ model: 'x', messages });
    expect(fakes[0]!.all.map((r) => r.input.renderTokens)).toEqual([[5], undefined]);
  });

  it('a template whose markers are not single tokens passes nothing', async () => {
    const { fakes, openai } = await serve(template('meta-llama-Llama-3.1-8B-Instruct.jinja'), {});
    await openai.chat.completions.create({ model: 'x', messages, tools });
    expect(fakes[0]!.all[0]!.input.renderTokens).toBeUndefined();
  });

  it('tool_choice none renders the tools as auto does (the prompt keeps its prefix) but parses no call', async () => {
    const { fakes, openai } = await serve(template('meta-llama-Llama-3.1-8B-Instruct.jinja'), { '<|python_tag|>': 200 });
    await openai.chat.completions.create({ model: 'x', messages, tools });
    await openai.chat.completions.create({ model: 'x', messages });
    fakes[0]!.autoRun = { tokens: 0, text: () => ['{"name": "get_weather", ', '"parameters": {"city": "Paris"}}'] };
    const none = await openai.chat.completions.create({ model: 'x', messages, tools, tool_choice: 'none' });
    const [auto, plain, noneInput] = fakes[0]!.all.map((r) => r.input);
    expect(noneInput!.prompt).toEqual(auto!.prompt);
    expect(noneInput!.prompt).not.toEqual(plain!.prompt);
    expect(noneInput!.renderTokens).toBeUndefined();
    expect(none.choices[0]!.finish_reason).toBe('stop');
    expect(none.choices[0]!.message.tool_calls ?? []).toEqual([]);
    expect(none.choices[0]!.message.content).toBe('{"name": "get_weather", "parameters": {"city": "Paris"}}');
  });

  it('the parser turns the rendered marker into a tool call', async () => {
    const { fakes, openai } = await serve(template('meta-llama-Llama-3.1-8B-Instruct.jinja'), { '<|python_tag|>': 200 });
    fakes[0]!.autoRun = { tokens: 0, text: () => ['<|python_tag|>', '{"name": "get_weather", ', '"parameters": {"city": "Paris"}}'] };
    const res = await openai.chat.completions.create({ model: 'x', messages, tools });
    expect(fakes[0]!.all[0]!.input.renderTokens).toEqual([200]);
    expect(res.choices[0]!.finish_reason).toBe('tool_calls');
    const tc = res.choices[0]!.message.tool_calls![0]!;
    expect(tc.type === 'function' && [tc.function.name, JSON.parse(tc.function.arguments)]).toEqual(['get_weather', { city: 'Paris' }]);
  });
});
