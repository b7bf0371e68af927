// What the coding agents send that the plain SDK calls do not: in Messages (Claude Code) system
// messages inside messages, adaptive thinking, output_config.effort, context_management, metadata,
// cache_control, server tools and the per-session billing header; in Responses (Codex CLI)
// namespace tools, hosted tools, include, prompt_cache_key and xhigh effort. Each is accepted (a
// field that changes nothing is checked for shape only), and each malformed value is a 400 naming it.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { OutputStream } from '../../backend/http/responses-shapes.js';
import { budgetOf } from '../../backend/http/thinking-budget.js';
import { chatMessagesOf } from '../../backend/responses/conversation.js';
import { parseMessagesRequest } from '../../backend/validation/anthropic-schema.js';
import { parseResponsesRequest } from '../../backend/validation/responses-schema.js';
import { defaultConfig } from '../../backend/app/config.js';
import { refusal } from '../helpers/refusal.js';
import { serveScripted, type ScriptedServer } from '../helpers/scripted-server.js';


const user = [{ role: 'user', content: 'fix the bug' }];

describe('Messages: what Claude Code sends', () => {
  it('joins system messages before the first assistant turn to the system prompt; later ones keep their place', () => {
    const r = parseMessagesRequest({
      max_tokens: 8, system: 'top',
      messages: [
        { role: 'user', content: 'a' }, { role: 'system', content: [{ type: 'text', text: 'environment' }] }, { role: 'assistant', content: 'b' },
        { role: 'system', content: 'reminder' }, { role: 'user', content: 'c' },
      ],
    });
    expect(r.messages).toEqual([
      { role: 'system', content: 'top\n\nenvironment' }, { role: 'user', content: 'a' }, { role: 'assistant', content: 'b' },
      { role: 'system', content: 'reminder' }, { role: 'user', content: 'c' },
    ]);
    // Without a system prompt the early system message becomes it; alone at the front it stays as is.
    expect(parseMessagesRequest({ max_tokens: 8, messages: [{ role: 'user', content: 'a' }, { role: 'system', content: 'env' }] }).messages)
      .toEqual([{ role: 'system', content: 'env' }, { role: 'user', content: 'a' }]);
    expect(parseMessagesRequest({ max_tokens: 8, system: 'top', messages: user }).messages).toEqual([{ role: 'system', content: 'top' }, ...user]);
  });

  it("two sessions of Claude Code in a project share their prompt's front up to the task: system prompt, environment, tools", () => {
    // The recorded first request, and the same request of a session with another task.
    const body = JSON.parse(readFileSync(join(import.meta.dirname, '..', 'fixtures', 'agents', 'claude-first-request.json'), 'utf8'));
    const other = structuredClone(body);
    other.messages[0].content.at(-1).text = 'Another task entirely.';
    const [a, b] = [parseMessagesRequest(body), parseMessagesRequest(other)];
    expect(a.messages.map((m) => m.role)).toEqual(['system', 'user']);
    expect(a.messages[0]!.content).toContain('# Environment');
    expect(b.messages[0]).toEqual(a.messages[0]);
    expect(b.messages[1]).not.toEqual(a.messages[1]);
  });

  it('drops the per-session billing header block from the system prompt (a stable prefix across sessions)', () => {
    const system = (session: string) => [
      { type: 'text', text: `x-anthropic-billing-header: cc_version=2.1.197.8f6; cc_entrypoint=cli; cch=${session};` },
      { type: 'text', text: 'You are Claude Code.', cache_control: { type: 'ephemeral' } },
    ];
    const a = parseMessagesRequest({ max_tokens: 8, system: system('11111'), messages: user });
    const b = parseMessagesRequest({ max_tokens: 8, system: system('22222'), messages: user });
    expect(a.messages[0]).toEqual({ role: 'system', content: 'You are Claude Code.' });
    expect(b.messages).toEqual(a.messages);
  });

  it('reads thinking adaptive|enabled|disabled and output_config.effort (max is high\'s budget)', () => {
    const adaptive = parseMessagesRequest({ max_tokens: 8, messages: user, thinking: { type: 'adaptive' }, output_config: { effort: 'max' } });
    expect([adaptive.templateKwargs, adaptive.thinkingBudget, adaptive.effort]).toEqual([{ enable_thinking: true }, null, 'high']);
    const enabled = parseMessagesRequest({ max_tokens: 8, messages: user, thinking: { type: 'enabled', budget_tokens: 99 }, output_config: { effort: 'low' } });
    expect([enabled.thinkingBudget, enabled.effort]).toEqual([99, 'low']);
    const config = { ...defaultConfig(), reasoningEffortBudgets: [10, 20, 30], reasoningBudget: -1 };
    // The request's own budget first, then its effort's, then the server's.
    expect(budgetOf({ config }, { budget: enabled.thinkingBudget, effort: enabled.effort })).toBe(99);
    expect(budgetOf({ config }, { budget: adaptive.thinkingBudget, effort: adaptive.effort })).toBe(30);
    expect(budgetOf({ config }, { budget: null, effort: 'xhigh' })).toBe(30);
    expect(parseMessagesRequest({ max_tokens: 8, messages: user, thinking: { type: 'disabled' } }).templateKwargs).toEqual({ enable_thinking: false });
  });

  it('accepts metadata, context_management, cache_control anywhere, and leaves server tools out', () => {
    const r = parseMessagesRequest({
      max_tokens: 8, metadata: { user_id: 'u1' },
      context_management: { edits: [{ type: 'clear_thinking_20251015', keep: 'all' }, { type: 'clear_tool_uses_20250919' }] },
      tools: [
        { name: 'Bash', input_schema: { type: 'object' }, cache_control: { type: 'ephemeral', ttl: '1h' } },
        { type: 'web_search_20250305', name: 'web_search', max_uses: 5 },
      ],
      messages: [{ role: 'user', content: [{ type: 'text', text: 'hi', cache_control: { type: 'ephemeral' } }] }],
    });
    expect(r.tools.map((t) => t.function.name)).toEqual(['Bash']);
    expect(r.omittedTools).toEqual(['web_search_20250305']);
    expect(r.messages).toEqual([{ role: 'user', content: 'hi' }]);
  });

  it('refuses malformed values of the new fields, naming them', () => {
    const bad = (extra: Record<string, unknown>) => refusal(() => parseMessagesRequest({ max_tokens: 8, messages: user, ...extra }));
    expect(bad({ thinking: { type: 'sometimes' } })).toMatch(/^400 \[thinking\.type\] .*enabled, adaptive, disabled/);
    expect(bad({ output_config: { effort: 'huge' } })).toMatch(/^400 \[output_config\.effort\]/);
    expect(bad({ output_config: 'high' })).toMatch(/^400 \[output_config\]/);
    expect(bad({ metadata: { user_id: 7 } })).toMatch(/^400 \[metadata\.user_id\]/);
    expect(bad({ context_management: { edits: [{ keep: 1 }] } })).toMatch(/^400 \[context_management\.edits\[0\]\.type\]/);
    expect(bad({ messages: [{ role: 'user', content: [{ type: 'text', text: 'x', cache_control: { type: 'forever' } }] }] }))
      .toMatch(/^400 \[messages\[0\]\.content\[0\]\.cache_control\.type\]/);
    expect(bad({ tools: [{ name: 'a', input_schema: {}, cache_control: 'yes' }] })).toMatch(/^400 \[tools\[0\]\.cache_control\]/);
    expect(bad({ tools: [{ type: 7, name: 'a' }] })).toMatch(/^400 \[tools\[0\]\.type\]/);
    expect(bad({ messages: [{ role: 'system', content: [{ type: 'image' }] }] })).toMatch(/^400 \[messages\[0\]\.content\[0\]\.type\]/);
  });
});

const namespaceTool = {
  type: 'namespace', name: 'mcp__repl', description: 'A REPL.',
  tools: [{ type: 'function', name: 'js', description: 'Run JS', parameters: { type: 'object', properties: { code: { type: 'string' } } }, strict: false }],
};
const shell = { type: 'function', name: 'shell', parameters: { type: 'object', properties: { command: { type: 'array', items: { type: 'string' } } } }, strict: false };

describe('Responses: what Codex CLI sends', () => {
  it('offers a namespace\'s functions under qualified names, echoes the namespace, leaves hosted tools out', () => {
    const r = parseResponsesRequest({
      input: 'x', tools: [shell, { type: 'web_search', external_web_access: false }, namespaceTool, { type: 'local_shell' }],
      include: ['reasoning.encrypted_content'], prompt_cache_key: 'session-1', reasoning: { effort: 'xhigh', summary: 'auto' }, store: false,
    });
    expect(r.tools.map((t) => t.function.name)).toEqual(['shell', 'mcp__repl__js']);
    expect(r.toolMembers).toEqual({ mcp__repl__js: { namespace: 'mcp__repl', name: 'js' } });
    expect(r.omittedTools).toEqual(['web_search', 'local_shell']);
    expect(r.declaredTools.map((t) => t.type === 'namespace' ? `${t.name}:${t.tools.map((f) => f.name).join(',')}` : t.name)).toEqual(['shell', 'mcp__repl:js']);
    expect([r.include, r.promptCacheKey, r.reasoningEffort, r.store]).toEqual([['reasoning.encrypted_content'], 'session-1', 'xhigh', false]);
    expect(parseResponsesRequest({ input: 'x', tools: [namespaceTool], tool_choice: { type: 'function', namespace: 'mcp__repl', name: 'js' } }).toolChoice)
      .toEqual({ type: 'function', function: { name: 'mcp__repl__js' } });
  });

  it('renders a namespaced call sent back under its qualified name', () => {
    const messages = chatMessagesOf(null, [
      { type: 'function_call', call_id: 'c1', namespace: 'mcp__repl', name: 'js', arguments: '{}' },
      { type: 'function_call_output', call_id: 'c1', output: '2' },
    ]);
    expect(messages[0]!.tool_calls![0]!.function.name).toBe('mcp__repl__js');
  });

  it('writes a call of a namespace\'s member back as its namespace and own name', () => {
    const s = new OutputStream('r', { mcp__repl__js: { namespace: 'mcp__repl', name: 'js' } });
    s.push([{ type: 'tool_call', index: 0, id: 'call_1', name: 'mcp__repl__js' }, { type: 'tool_args', index: 0, text: '{}' }]);
    s.push([{ type: 'tool_call', index: 1, id: 'call_2', name: 'shell' }]);
    s.end();
    expect(s.items).toMatchObject([
      { type: 'function_call', name: 'js', namespace: 'mcp__repl', call_id: 'call_1' },
      { type: 'function_call', name: 'shell', call_id: 'call_2' },
    ]);
    expect('namespace' in s.items[1]!).toBe(false);
  });

  it('refuses malformed values of the new fields, naming them', () => {
    const bad = (extra: Record<string, unknown>) => refusal(() => parseResponsesRequest({ input: 'x', ...extra }));
    expect(bad({ include: ['everything'] })).toMatch(/^400 \[include\[0\]\]/);
    expect(bad({ include: 'reasoning.encrypted_content' })).toMatch(/^400 \[include\]/);
    expect(bad({ prompt_cache_key: 5 })).toMatch(/^400 \[prompt_cache_key\]/);
    expect(bad({ tools: [{ type: 'namespace', name: 'n', tools: [{ type: 'web_search' }] }] })).toMatch(/^400 \[tools\[0\]\.tools\[0\]\.type\]/);
    expect(bad({ tools: [{ type: 'namespace', tools: [] }] })).toMatch(/^400 \[tools\[0\]\.name\]/);
    expect(bad({ tools: [{ type: 'namespace', name: 'n', tools: [{ type: 'function', name: 'bad name' }] }] })).toMatch(/^400 \[tools\[0\]\.tools\[0\]\.name\]/);
    expect(bad({ tools: [{ type: 3 }] })).toMatch(/^400 \[tools\[0\]\.type\]/);
    expect(bad({ tools: [{ type: 'web_search' }], tool_choice: { type: 'web_search' } })).toMatch(/^400 \[tool_choice\.type\] .*cannot run "web_search"/);
    expect(bad({ tools: [shell, { ...shell }] })).toMatch(/^400 \[tools\[1\]\.name\] .*duplicate tool name shell/);
  });
});

describe('a namespaced call through the server (scripted engine)', () => {
  const servers: ScriptedServer[] = [];
  const dirs: string[] = [];
  afterEach(async () => {
    for (const s of servers.splice(0)) await s.close();
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it('the model calls mcp__repl__js; the client gets namespace mcp__repl, name js; the result sent back is read', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'strata-ns-'));
    dirs.push(dir);
    let next = ['<tool_call>\n{"name": "mcp__repl__js", "arguments": {"code": "1+1"}}\n</tool_call>'];
    const srv = await serveScripted(() => next, { dir, ctx: 4096 });
    servers.push(srv);
    const client = new OpenAI({ baseURL: `${srv.url}/v1`, apiKey: 'unused', maxRetries: 0 });
    const tools = [namespaceTool, { type: 'web_search' }] as never;
    const stream = client.responses.stream({ model: 'fake', input: 'compute', tools, store: false });
    const done: Array<Record<string, unknown>> = [];
    for await (const ev of stream) if (ev.type === 'response.output_item.done') done.push(ev.item as never);
    expect(done).toMatchObject([{ type: 'function_call', namespace: 'mcp__repl', name: 'js', arguments: '{"code": "1+1"}' }]);
    next = ['two'];
    const call = done[0]!;
    const second = await client.responses.create({
      model: 'fake', tools, store: false,
      input: [{ role: 'user', content: 'compute' }, call as never, { type: 'function_call_output', call_id: call.call_id as string, output: '2' }],
    });
    expect(second.output_text).toBe('two');
    const fake = srv.fakes[0]!;
    const prompt = await fake.detokenize(fake.all.at(-1)!.input.prompt as number[]);
    expect(prompt).toContain('"name": "mcp__repl__js"');
    expect(prompt).not.toContain('web_search');
  });
});
