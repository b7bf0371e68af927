// `strata launch`'s arguments (the client, the server's URL and key, the options a started server
// gets, the client's own after --), where it finds a client, and what each client is given: the
// environment, arguments and files that point it at the server with its telemetry off.
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseArgs, UsageError } from '../../backend/args/args.js';
import { AGENT_CLIENTS, type AgentTarget } from '../../backend/cli/launch-clients.js';
import { pickModel } from '../../backend/cli/launch-server.js';
import { clientEnv, findClient, parseLaunchArgs } from '../../backend/cli/launch.js';
import type { ModelEntryBody } from '../../contract/models.js';
import { agentTerminalOptions } from '../../extension/commands/agent-terminal.js';

const parse = (argv: string[], env: NodeJS.ProcessEnv = {}) => parseLaunchArgs(parseArgs(argv), env);

describe('strata launch arguments', () => {
  it('defaults: the server on 127.0.0.1:8080, no key, the server default model, nothing for the client', () => {
    expect(parse(['claude'])).toEqual({ client: 'claude', url: 'http://127.0.0.1:8080', apiKey: null, model: null, serveArgs: ['--port=8080'], clientArgs: [] });
  });

  it("everything after -- is the client's, untouched, options included", () => {
    expect(parse(['codex', '--', 'exec', '--model', 'x', '--', 'hi']).clientArgs).toEqual(['exec', '--model', 'x', '--', 'hi']);
  });

  it('other options go to the server it starts, as given; --port sets both the URL and the server', () => {
    const a = parse(['opencode', '--port', '9123', '--model', 'a=/m/a.gguf', '--model', '/m/b.gguf', '--ctx', '32768', '--deterministic']);
    expect(a.url).toBe('http://127.0.0.1:9123');
    expect(a.model).toBe('/m/b.gguf');
    expect(a.serveArgs).toEqual(['--model=a=/m/a.gguf', '--model=/m/b.gguf', '--ctx=32768', '--deterministic=true', '--port=9123']);
  });

  it('--url names the server (a /v1 path or a slash is dropped) and its port; the key comes from --api-key, else STRATA_API_KEY', () => {
    const a = parse(['continue', '--url', 'http://localhost:1234/v1/'], { STRATA_API_KEY: 'sk-env' });
    expect(a.url).toBe('http://localhost:1234');
    expect(a.serveArgs).toEqual(['--port=1234']);
    expect(a.apiKey).toBe('sk-env');
    expect(parse(['continue', '--api-key', 'sk-flag'], { STRATA_API_KEY: 'sk-env' }).apiKey).toBe('sk-flag');
    expect(parse(['continue'], { STRATA_API_KEY: '' }).apiKey).toBeNull();
  });

  it.each([
    [[], /name a client: claude, codex, opencode, continue/],
    [['cursor'], /unknown client 'cursor'/],
    [['claude', 'extra'], /unexpected argument 'extra' \(the client's own arguments go after --\)/],
    [['claude', '--url', 'ftp://x'], /not an http\(s\) address/],
    [['claude', '--url', 'not a url'], /is not a URL/],
    [['claude', '--port', '70000'], /--port must be an integer/],
    [['claude', '--model'], /--model needs a name or a file/],
  ])('refuses %j naming what is wrong', (argv, why) => {
    expect(() => parse(argv)).toThrow(UsageError);
    expect(() => parse(argv)).toThrow(why);
  });
});

describe('finding the client', () => {
  let root: string;
  afterEach(() => { if (root) rmSync(root, { recursive: true, force: true }); });

  const exe = (path: string, mode = 0o755): void => { writeFileSync(path, '#!/bin/sh\n'); chmodSync(path, mode); };

  it('PATH first, then node_modules/.bin of each root in order; a file that is not executable is passed over', () => {
    root = mkdtempSync(join(tmpdir(), 'strata-find-'));
    const [onPath, plain, project] = ['path', 'plain', 'project'].map((d) => join(root, d));
    mkdirSync(onPath!);
    mkdirSync(plain!);
    mkdirSync(join(project!, 'node_modules', '.bin'), { recursive: true });
    exe(join(project!, 'node_modules', '.bin', 'cn'));
    exe(join(plain!, 'cn'), 0o644);
    expect(findClient('cn', { PATH: [plain, onPath].join(delimiter) }, [project!], 'linux')).toBe(join(project!, 'node_modules', '.bin', 'cn'));
    exe(join(onPath!, 'cn'));
    expect(findClient('cn', { PATH: [plain, onPath].join(delimiter) }, [project!], 'linux')).toBe(join(onPath!, 'cn'));
    expect(findClient('claude', { PATH: onPath! }, [project!], 'linux')).toBeNull();
  });

  it("on Windows a command is found by PATHEXT's extensions (npm's .cmd shims)", () => {
    root = mkdtempSync(join(tmpdir(), 'strata-find-'));
    writeFileSync(join(root, 'codex.CMD'), '@echo off\r\n');
    expect(findClient('codex', { PATH: root, PATHEXT: '.EXE;.CMD' }, [], 'win32')).toBe(join(root, 'codex.CMD'));
  });
});

const target = (over: Partial<AgentTarget> = {}): AgentTarget => ({ baseUrl: 'http://127.0.0.1:8080', apiKey: 'sk-k', model: 'coder', contextTokens: 32768, ...over });

describe("what each client is given", () => {
  it('Claude Code: the base URL, the key as its Bearer token, the model for every role, telemetry off, its window; no Anthropic key', () => {
    const p = AGENT_CLIENTS.claude.launch(target(), '/d');
    expect(p.env).toMatchObject({
      ANTHROPIC_BASE_URL: 'http://127.0.0.1:8080', ANTHROPIC_AUTH_TOKEN: 'sk-k', ANTHROPIC_MODEL: 'coder',
      ANTHROPIC_DEFAULT_OPUS_MODEL: 'coder', ANTHROPIC_DEFAULT_SONNET_MODEL: 'coder', ANTHROPIC_DEFAULT_HAIKU_MODEL: 'coder', CLAUDE_CODE_SUBAGENT_MODEL: 'coder',
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1', DISABLE_AUTOUPDATER: '1', DISABLE_TELEMETRY: '1', DISABLE_ERROR_REPORTING: '1',
      // Under Claude Code's 100K floor: the floor, compacting at 90% of the model's context.
      CLAUDE_CODE_AUTO_COMPACT_WINDOW: '100000', CLAUDE_AUTOCOMPACT_PCT_OVERRIDE: '29',
    });
    expect(p.unset).toEqual(['ANTHROPIC_API_KEY']);
    expect(p.args).toEqual([]);
    const big = AGENT_CLIENTS.claude.launch(target({ contextTokens: 131072 }), '/d').env;
    expect(big.CLAUDE_CODE_AUTO_COMPACT_WINDOW).toBe('131072');
    expect(big.CLAUDE_AUTOCOMPACT_PCT_OVERRIDE).toBeUndefined();
    const unknown = AGENT_CLIENTS.claude.launch(target({ contextTokens: null, apiKey: '' }), '/d').env;
    expect(unknown.CLAUDE_CODE_AUTO_COMPACT_WINDOW).toBeUndefined();
    // A server without a key still gets one: Claude Code refuses to start without.
    expect(unknown.ANTHROPIC_AUTH_TOKEN).toBe('strata');
  });

  it('Codex: a strata provider on the Responses API by -c overrides, the key by name, the context, analytics and update checks off', () => {
    const p = AGENT_CLIENTS.codex.launch(target({ model: 'we"ird' }), '/d');
    const pairs = p.args.filter((_, i) => i % 2 === 1);
    expect(p.args.filter((_, i) => i % 2 === 0).every((a) => a === '-c')).toBe(true);
    expect(pairs).toEqual([
      'model_provider="strata"', 'model_providers.strata.name="Strata"', 'model_providers.strata.base_url="http://127.0.0.1:8080/v1"',
      'model_providers.strata.env_key="STRATA_API_KEY"', 'model_providers.strata.wire_api="responses"', 'model="we\\"ird"',
      'model_context_window=32768', 'model_auto_compact_token_limit=29491',
      'analytics.enabled=false', 'feedback.enabled=false', 'check_for_update_on_startup=false',
    ]);
    expect(p.env).toEqual({ STRATA_API_KEY: 'sk-k' });
  });

  it('opencode: an OpenAI-compatible provider in OPENCODE_CONFIG_CONTENT with the model, its context and output limit; updates, model fetches and sharing off', () => {
    const p = AGENT_CLIENTS.opencode.launch(target(), '/d');
    const config = JSON.parse(p.env.OPENCODE_CONFIG_CONTENT!);
    expect(config.model).toBe('strata/coder');
    expect(config.autoupdate).toBe(false);
    expect(config.share).toBe('disabled');
    expect(config.provider.strata).toEqual({
      npm: '@ai-sdk/openai-compatible', name: 'Strata', options: { baseURL: 'http://127.0.0.1:8080/v1', apiKey: 'sk-k' },
      models: { coder: { name: 'coder', tool_call: true, limit: { context: 32768, output: 8192 } } },
    });
    expect(p.env).toMatchObject({ OPENCODE_DISABLE_AUTOUPDATE: '1', OPENCODE_DISABLE_MODELS_FETCH: '1', OPENCODE_DISABLE_SHARE: '1' });
    expect(JSON.parse(AGENT_CLIENTS.opencode.launch(target({ contextTokens: null }), '/d').env.OPENCODE_CONFIG_CONTENT!).provider.strata.models.coder.limit).toBeUndefined();
  });

  it("Continue: a config file in the launch's folder with one OpenAI-compatible model, given by --config; metrics off", () => {
    const p = AGENT_CLIENTS.continue.launch(target({ apiKey: 'sk: "quoted"' }), '/run/d');
    expect(p.args).toEqual(['--config', join('/run/d', 'continue.yaml')]);
    expect(p.files).toHaveLength(1);
    expect(p.files[0]!.name).toBe('continue.yaml');
    const text = p.files[0]!.text;
    expect(text).toContain('    provider: openai\n');
    expect(text).toContain('    apiBase: "http://127.0.0.1:8080/v1"\n');
    expect(text).toContain('    apiKey: "sk: \\"quoted\\""\n');
    expect(text).toContain('    capabilities: [tool_use]\n');
    expect(text).toContain('      contextLength: 32768\n');
    expect(p.env).toEqual({ CONTINUE_CLI_ENABLE_TELEMETRY: '0', CONTINUE_METRICS_ENABLED: '0', CONTINUE_CLI_AUTO_UPDATED: '1' });
  });

  it("the client's environment: the inherited one less what it must not get (and Electron's Node switch), plus its own", () => {
    const env = clientEnv({ PATH: '/bin', ANTHROPIC_API_KEY: 'sk-ant', ELECTRON_RUN_AS_NODE: '1', KEEP: 'y' }, AGENT_CLIENTS.claude.launch(target(), '/d'));
    expect(env.ANTHROPIC_API_KEY).toBeUndefined();
    expect(env.ELECTRON_RUN_AS_NODE).toBeUndefined();
    expect(env).toMatchObject({ PATH: '/bin', KEEP: 'y', ANTHROPIC_AUTH_TOKEN: 'sk-k' });
  });
});

describe("the served model a client uses", () => {
  const entry = (id: string, file: string, ctx: number | null, isDefault = false): ModelEntryBody => ({
    id, object: 'model', created: 0, owned_by: 'strata', state: ctx === null ? 'unloaded' : 'loaded', role: null, default: isDefault, file, error: null,
    meta: ctx === null ? { file, loading: false } : { file, n_ctx: ctx } as unknown as ModelEntryBody['meta'],
  });
  const models = [entry('qwen-coder', 'coder.gguf', 8192), entry('chat', 'chat.gguf', 32768, true), entry('embed', 'embed.gguf', null)];

  it("the server's default, else the one named (by name or file) with its context; one the server does not serve is none", () => {
    expect(pickModel(models, null)).toEqual({ name: 'chat', contextTokens: 32768 });
    expect(pickModel(models, 'coder')).toEqual({ name: 'coder', contextTokens: 8192 });
    expect(pickModel(models, 'embed')).toEqual({ name: 'embed', contextTokens: null });
    expect(pickModel(models, 'gpt-4o')).toBeNull();
    // One model answers under any name.
    expect(pickModel([models[0]!], 'gpt-4o')).toEqual({ name: 'gpt-4o', contextTokens: 8192 });
  });
});

describe('Use with a Coding Agent', () => {
  it('opens a terminal running strata launch under the editor runtime, the URL on its command line and the key in its environment', () => {
    const o = agentTerminalOptions('opencode', { baseUrl: 'http://127.0.0.1:39123', apiKey: 'sk-managed' }, { execPath: '/opt/code/code', cli: '/ext/dist/strata.mjs' });
    expect(o).toEqual({
      name: 'Strata: opencode', shellPath: '/opt/code/code',
      shellArgs: ['/ext/dist/strata.mjs', 'launch', 'opencode', '--url', 'http://127.0.0.1:39123'],
      env: { ELECTRON_RUN_AS_NODE: '1', STRATA_API_KEY: 'sk-managed', STRATA_LAUNCH_HOLD: '1' },
    });
    expect(agentTerminalOptions('claude', { baseUrl: 'https://gpu.example:8443', apiKey: undefined }, { execPath: 'x', cli: 'y' }).env.STRATA_API_KEY).toBe('');
  });
});
