// The first requests the coding agents send (recorded from Claude Code, Codex CLI, opencode and
// Continue's CLI against `strata serve`, test/fixtures/agents/), through the parsers of their
// dialects: each is accepted whole, tools and all; what Codex sends later that answers no call;
// and the test switch --first-tool-call required, which turns each first request's tool_choice
// auto into required and leaves the request after a tool result as sent.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { withFirstToolCall } from '../../backend/http/chat-turn/choice-text.js';
import { chatMessagesOf } from '../../backend/responses/conversation.js';
import { parseMessagesRequest } from '../../backend/validation/anthropic-schema.js';
import { parseResponsesRequest } from '../../backend/validation/responses-schema.js';
import { parseChatRequest } from '../../backend/validation/schemas.js';
import type { ApiError } from '../../backend/validation/errors.js';

const fixture = (name: string): any => JSON.parse(readFileSync(join(import.meta.dirname, '..', 'fixtures', 'agents', `${name}-first-request.json`), 'utf8'));

describe("the agents' first requests parse", () => {
  it('Claude Code (Messages): every tool, the system prompt, the streamed answer it asks for', () => {
    const body = fixture('claude');
    const r = parseMessagesRequest(body);
    expect(r.tools.map((t) => t.function.name)).toEqual(body.tools.map((t: { name: string }) => t.name));
    expect(r.toolChoice).toBe('auto');
    expect(r.stream).toBe(true);
    expect(r.maxTokens).toBe(body.max_tokens);
    expect(r.messages[0]!.role).toBe('system');
    expect(r.messages.some((m) => m.role === 'user')).toBe(true);
    // output_config.effort is read as a reasoning effort.
    expect(r.effort).toBe(body.output_config.effort);
  });

  it('Codex CLI (Responses): its function tools offered, the hosted web_search left out, its reasoning items asked for', () => {
    const body = fixture('codex');
    const r = parseResponsesRequest(body);
    const functions = body.tools.filter((t: { type: string }) => t.type === 'function').map((t: { name: string }) => t.name);
    expect(r.tools.map((t) => t.function.name)).toEqual(expect.arrayContaining(functions));
    expect(r.omittedTools).toContain('web_search');
    expect(r.include).toEqual(['reasoning.encrypted_content']);
    expect(r.promptCacheKey).toBe(body.prompt_cache_key);
    expect(r.store).toBe(false);
    expect(r.toolChoice).toBe('auto');
    expect(r.input.length).toBe(body.input.length);
  });

  it.each(['opencode', 'continue'])('%s (chat completions): every tool, streamed with usage', (name) => {
    const body = fixture(name);
    const r = parseChatRequest(body);
    expect(r.tools.map((t) => t.function.name)).toEqual(body.tools.map((t: { function: { name: string } }) => t.function.name));
    expect(r.toolChoice).toBe('auto');
    expect(r.stream).toBe(true);
    expect(r.messages.length).toBe(body.messages.length);
  });
});

describe("Codex's outputs that answer no call", () => {
  // After a create_goal call Codex sends the goal's objective as an output of its own, named by a tool of its agent namespace.
  const objective = { type: 'function_call_output', id: 'fco_1', name: 'goal_objective', namespace: 'agent', output: 'ship it' };
  const body = (item: Record<string, unknown>) => ({ model: 'm', input: [{ role: 'user', content: 'go' }, item] });
  const refusal = (item: Record<string, unknown>): ApiError => {
    try { parseResponsesRequest(body(item)); } catch (e) { return e as ApiError; }
    throw new Error('accepted');
  };

  it('are accepted, named by their tool, and reach the model as a tool result', () => {
    const r = parseResponsesRequest(body(objective));
    expect(r.input[1]).toEqual({ type: 'function_call_output', name: 'goal_objective', namespace: 'agent', output: 'ship it' });
    expect(chatMessagesOf(null, r.input).at(-1)).toEqual({ role: 'tool', content: 'ship it', name: 'agent__goal_objective' });
  });

  it('an output with neither call_id nor name, or a malformed one, is still a 400 naming the field', () => {
    expect(refusal({ type: 'function_call_output', output: 'x' })).toMatchObject({ status: 400, param: 'input[1].call_id' });
    expect(refusal({ type: 'function_call_output', call_id: 7, output: 'x' })).toMatchObject({ status: 400, param: 'input[1].call_id' });
    expect(refusal({ ...objective, name: '' })).toMatchObject({ status: 400, param: 'input[1].name' });
    expect(refusal({ ...objective, namespace: 3 })).toMatchObject({ status: 400, param: 'input[1].namespace' });
  });
});

describe('--first-tool-call required', () => {
  const conversations = {
    claude: () => parseMessagesRequest(fixture('claude')),
    codex: () => { const r = parseResponsesRequest(fixture('codex')); return { ...r, messages: chatMessagesOf(r.instructions, r.input) }; },
    opencode: () => parseChatRequest(fixture('opencode')),
    continue: () => parseChatRequest(fixture('continue')),
  };

  it.each(Object.keys(conversations))("makes %s's first request call a tool; auto leaves it as sent", (name) => {
    const c = conversations[name as keyof typeof conversations]();
    expect(withFirstToolCall(c, 'required').toolChoice).toBe('required');
    expect(withFirstToolCall(c, 'auto')).toBe(c);
  });

  it('leaves a conversation that holds a tool result, a choice other than auto, or no tools as sent', () => {
    const c = parseChatRequest(fixture('continue'));
    const answered = {
      ...c,
      messages: [...c.messages,
        { role: 'assistant' as const, content: null, tool_calls: [{ id: 'call_1', type: 'function' as const, function: { name: 'Read', arguments: '{"filepath":"notes.md"}' } }] },
        { role: 'tool' as const, content: '# Notes', tool_call_id: 'call_1' }],
    };
    expect(withFirstToolCall(answered, 'required')).toBe(answered);
    for (const toolChoice of ['none', { type: 'function', function: { name: 'Read' } }] as const) {
      const other = { ...c, toolChoice };
      expect(withFirstToolCall(other, 'required')).toBe(other);
    }
    const toolless = { ...c, tools: [] };
    expect(withFirstToolCall(toolless, 'required')).toBe(toolless);
  });
});
