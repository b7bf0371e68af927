// The coding agents `strata launch` runs and how each one is pointed at a Strata server: the
// environment, arguments and files that give it the server's URL, key, model and context, with its
// telemetry and update checks off, so that a local session talks to this machine only. Pure: the
// unit tests read every client's plan.
import { join } from 'node:path';
import { CODING_AGENT_NAMES, CODING_AGENTS, type CodingAgent, type CodingAgentName } from '../../contract/coding-agents.js';

export type AgentName = CodingAgentName;
export const AGENT_NAMES = CODING_AGENT_NAMES;

/** The server a client is pointed at. */
export interface AgentTarget {
  /** http://HOST:PORT, no trailing slash. */
  baseUrl: string;
  /** The server's key; '' when it wants none (clients still send one). */
  apiKey: string;
  /** The served model's name. */
  model: string;
  /** Its context per request, tokens (null: unknown, the client keeps its own default). */
  contextTokens: number | null;
}

/** What a client gets on top of the environment it inherits. */
export interface AgentLaunch {
  env: Record<string, string>;
  /** Inherited variables removed (a cloud key that must not go to this server). */
  unset: string[];
  /** Arguments before the user's own. */
  args: string[];
  /** Files written into the launch's private folder before the client starts (name: within it). */
  files: Array<{ name: string; text: string }>;
}

/** A client: its names (contract/coding-agents.ts) and how it is pointed at a server. */
export interface AgentClient extends CodingAgent {
  /** `dir`: the launch's private folder, where `files` go. */
  launch(t: AgentTarget, dir: string): AgentLaunch;
}

const agent = (name: AgentName): CodingAgent => CODING_AGENTS.find((a) => a.name === name)!;

/** The key a client sends: the server's, or a placeholder the server ignores (clients refuse an empty one). */
const keyOf = (t: AgentTarget): string => t.apiKey || 'strata';

/** Claude Code takes no auto-compact window under this (it reads a smaller one as this). */
export const CLAUDE_MIN_COMPACT_WINDOW = 100_000;

/**
 * Claude Code speaks Anthropic Messages to ANTHROPIC_BASE_URL with ANTHROPIC_AUTH_TOKEN as its
 * Bearer token; every model role is the served model. Its auto-compact window is the model's
 * context; under Claude Code's 100K floor the window stays 100K and the percentage at which it
 * compacts is lowered to 90% of the context.
 */
const claude: AgentClient = {
  ...agent('claude'),
  launch(t) {
    const env: Record<string, string> = {
      ANTHROPIC_BASE_URL: t.baseUrl,
      ANTHROPIC_AUTH_TOKEN: keyOf(t),
      ANTHROPIC_MODEL: t.model,
      ANTHROPIC_DEFAULT_OPUS_MODEL: t.model,
      ANTHROPIC_DEFAULT_SONNET_MODEL: t.model,
      ANTHROPIC_DEFAULT_HAIKU_MODEL: t.model,
      CLAUDE_CODE_SUBAGENT_MODEL: t.model,
      // Telemetry, error reports, the update check and other calls home.
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      DISABLE_AUTOUPDATER: '1',
      DISABLE_TELEMETRY: '1',
      DISABLE_ERROR_REPORTING: '1',
    };
    if (t.contextTokens !== null) {
      env.CLAUDE_CODE_AUTO_COMPACT_WINDOW = String(Math.max(t.contextTokens, CLAUDE_MIN_COMPACT_WINDOW));
      if (t.contextTokens < CLAUDE_MIN_COMPACT_WINDOW) {
        env.CLAUDE_AUTOCOMPACT_PCT_OVERRIDE = String(Math.max(1, Math.floor((90 * t.contextTokens) / CLAUDE_MIN_COMPACT_WINDOW)));
      }
    }
    // An Anthropic key in the environment would be sent to this server (and asked about).
    return { env, unset: ['ANTHROPIC_API_KEY'], args: [], files: [] };
  },
};

/** A TOML string (a JSON string is a valid TOML basic string). */
const toml = (s: string): string => JSON.stringify(s);

/**
 * Codex speaks the Responses API to a model provider of its config; `-c` overrides add one named
 * strata (its key read from STRATA_API_KEY) and pick it, leaving the user's config.toml as it is.
 */
const codex: AgentClient = {
  ...agent('codex'),
  launch(t) {
    const set = (key: string, value: string): string[] => ['-c', `${key}=${value}`];
    const args = [
      ...set('model_provider', toml('strata')),
      ...set('model_providers.strata.name', toml('Strata')),
      ...set('model_providers.strata.base_url', toml(`${t.baseUrl}/v1`)),
      ...set('model_providers.strata.env_key', toml('STRATA_API_KEY')),
      ...set('model_providers.strata.wire_api', toml('responses')),
      ...set('model', toml(t.model)),
      ...(t.contextTokens !== null ? [
        ...set('model_context_window', String(t.contextTokens)),
        ...set('model_auto_compact_token_limit', String(Math.floor(t.contextTokens * 0.9))),
      ] : []),
      ...set('analytics.enabled', 'false'),
      ...set('feedback.enabled', 'false'),
      ...set('check_for_update_on_startup', 'false'),
    ];
    return { env: { STRATA_API_KEY: keyOf(t) }, unset: [], args, files: [] };
  },
};

/**
 * opencode reads a config from OPENCODE_CONFIG_CONTENT on top of the user's: an OpenAI-compatible
 * provider named strata with the served model, its context and a quarter of it for answers.
 */
const opencode: AgentClient = {
  ...agent('opencode'),
  launch(t) {
    const limit = t.contextTokens !== null
      ? { limit: { context: t.contextTokens, output: Math.min(32_000, Math.floor(t.contextTokens / 4)) } } : {};
    const config = {
      $schema: 'https://opencode.ai/config.json',
      model: `strata/${t.model}`,
      small_model: `strata/${t.model}`,
      autoupdate: false,
      share: 'disabled',
      provider: {
        strata: {
          npm: '@ai-sdk/openai-compatible', name: 'Strata',
          options: { baseURL: `${t.baseUrl}/v1`, apiKey: keyOf(t) },
          models: { [t.model]: { name: t.model, tool_call: true, ...limit } },
        },
      },
    };
    return {
      env: {
        OPENCODE_CONFIG_CONTENT: JSON.stringify(config),
        OPENCODE_DISABLE_AUTOUPDATE: '1',
        // The model catalogue from models.dev: the bundled one is enough for a local model.
        OPENCODE_DISABLE_MODELS_FETCH: '1',
        OPENCODE_DISABLE_SHARE: '1',
      },
      unset: [], args: [], files: [],
    };
  },
};

/** Continue's CLI (`cn`) reads an assistant config file given with --config: one OpenAI-compatible model. */
const continueCli: AgentClient = {
  ...agent('continue'),
  launch(t, dir) {
    // YAML reads JSON strings as they are.
    const q = JSON.stringify;
    const lines = [
      'name: Strata', 'version: 1.0.0', 'schema: v1', 'models:',
      `  - name: ${q(t.model)}`, '    provider: openai', `    model: ${q(t.model)}`,
      `    apiBase: ${q(`${t.baseUrl}/v1`)}`, `    apiKey: ${q(keyOf(t))}`,
      '    roles: [chat, edit, apply, summarize]', '    capabilities: [tool_use]',
      ...(t.contextTokens !== null ? ['    defaultCompletionOptions:', `      contextLength: ${t.contextTokens}`] : []),
    ];
    return {
      // CONTINUE_CLI_AUTO_UPDATED is what cn sets after it updated itself: with it, a newer version
      // found at start is only named, never installed over the pinned one (npm install -g).
      env: { CONTINUE_CLI_ENABLE_TELEMETRY: '0', CONTINUE_METRICS_ENABLED: '0', CONTINUE_CLI_AUTO_UPDATED: '1' },
      unset: [],
      args: ['--config', join(dir, 'continue.yaml')],
      files: [{ name: 'continue.yaml', text: `${lines.join('\n')}\n` }],
    };
  },
};

export const AGENT_CLIENTS: Readonly<Record<AgentName, AgentClient>> = { claude, codex, opencode, continue: continueCli };

export function isAgentName(s: string): s is AgentName {
  return (AGENT_NAMES as readonly string[]).includes(s);
}
