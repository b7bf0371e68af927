// The SSE chunk builder fed by the real streaming tool-call parser: a random model never
// writes tool calls, so this is where the tool_call delta path is pinned down.
import { describe, expect, it } from 'vitest';
import { ToolCallStreamParser } from '../../backend/chat/tool-calls.js';
import { ChatChunkBuilder, chatFinish, timingsOf, usageOf, type ChatChunk } from '../../backend/http/openai-shapes.js';

const text = 'Checking. <tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris", "unit": "C"}}\n</tool_call>'
  + '<tool_call>{"name": "get_time", "arguments": {}}</tool_call>';

/** What an OpenAI client accumulates from the chunks. */
function accumulate(chunks: ChatChunk[]) {
  const calls: Array<{ id: string; name: string; args: string }> = [];
  let content = '';
  for (const c of chunks) {
    const d = c.choices[0]!.delta;
    content += d.content ?? '';
    for (const t of d.tool_calls ?? []) {
      if (t.id) calls[t.index] = { id: t.id, name: t.function.name ?? '', args: '' };
      calls[t.index]!.args += t.function.arguments;
    }
  }
  return { content, calls };
}

describe('chat chunks from parser deltas', () => {
  for (const size of [1, 3, 7, 1000]) {
    it(`streams two tool calls as OpenAI deltas (text in ${size}-char pieces)`, () => {
      const b = new ChatChunkBuilder('chatcmpl-1', 'm', 1, 'fp');
      const parser = new ToolCallStreamParser('hermes', { toolsEnabled: true });
      const chunks: ChatChunk[] = [b.role()];
      for (let i = 0; i < text.length; i += size) chunks.push(...b.deltas(parser.push(text.slice(i, i + size))));
      chunks.push(...b.deltas(parser.end()));
      const finish = chatFinish('stop', parser.calls);
      chunks.push(b.final(finish, { promptTokens: 10, reused: 4, generated: 30, promptMs: 12, decodeMs: 300 }));
      expect(chunks[0]!.choices[0]!.delta).toEqual({ role: 'assistant', content: '' });
      const got = accumulate(chunks);
      expect(got.content).toBe('Checking.');
      expect(got.calls.map((c) => [c.name, JSON.parse(c.args)])).toEqual([['get_weather', { city: 'Paris', unit: 'C' }], ['get_time', {}]]);
      expect(new Set(got.calls.map((c) => c.id)).size).toBe(2);
      const last = chunks.at(-1)!;
      expect(last.choices[0]!.finish_reason).toBe('tool_calls');
      expect(last.usage).toEqual({ prompt_tokens: 10, completion_tokens: 30, total_tokens: 40, prompt_tokens_details: { cached_tokens: 4 } });
      expect(chunks.slice(0, -1).every((c) => c.choices[0]!.finish_reason === null)).toBe(true);
    });
  }

  it('keeps broken calls as content and finishes with stop', () => {
    const b = new ChatChunkBuilder('id', 'm', 1, 'fp');
    const parser = new ToolCallStreamParser('hermes', { toolsEnabled: true });
    const junk = 'a <tool_call>{"name": oops}</tool_call> b';
    const chunks = [...b.deltas(parser.push(junk)), ...b.deltas(parser.end())];
    expect(accumulate(chunks)).toEqual({ content: junk, calls: [] });
    expect(chatFinish('stop', parser.calls)).toBe('stop');
    expect(chatFinish('length', parser.calls)).toBe('length');
  });

  it('reports llama.cpp timings, null where the engine reported nothing', () => {
    expect(timingsOf({ promptTokens: 100, reused: 60, generated: 10, promptMs: 20, decodeMs: 50 })).toEqual({
      cache_n: 60, prompt_n: 40, prompt_ms: 20, prompt_per_token_ms: 0.5, prompt_per_second: 2000,
      predicted_n: 10, predicted_ms: 50, predicted_per_token_ms: 5, predicted_per_second: 200,
    });
    const t = timingsOf({ promptTokens: 5, reused: null, generated: 0, promptMs: null, decodeMs: null });
    expect(t).toMatchObject({ cache_n: null, prompt_n: null, prompt_ms: null, prompt_per_second: null, predicted_ms: null, predicted_per_second: null });
    expect(usageOf({ promptTokens: 5, reused: null, generated: 0, promptMs: null, decodeMs: null }).prompt_tokens_details.cached_tokens).toBe(0);
  });
});
