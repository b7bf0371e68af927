// opencode (the npm package's native binary) against `strata serve` through `strata launch
// opencode`: OpenAI chat completions, streamed, through an @ai-sdk/openai-compatible provider of its
// config. The workspace's opencode.json turns its sub-agent tool off (a sub-agent is a whole second
// loop) and the tools that write or run anything; npm runs offline, so the package opencode
// installs into its config folder at start is not fetched. Its answer limit is the model's
// output limit in the config strata launch gives it (a quarter of the context).
import { describe, it, vi } from 'vitest';
import { clientMissing } from '../helpers/agent-run.js';
import { AGENT_PROMPT, expectLoop, runAgent } from './agent-helpers.js';

vi.setConfig({ testTimeout: 180_000 });

const missing = clientMissing('opencode');

const projectConfig = {
  $schema: 'https://opencode.ai/config.json',
  tools: { task: false, bash: false, edit: false, write: false, webfetch: false, todowrite: false, skill: false },
};

describe.skipIf(missing !== null)(`opencode through strata launch${missing ? ` (skipped: ${missing})` : ''}`, () => {
  it('its first request is accepted, the forced call runs, its result goes back and the answer is printed; exit 0', async () => {
    const out = await runAgent('opencode', 'chat', {
      args: () => ['run', AGENT_PROMPT],
      env: { npm_config_offline: 'true' },
      files: { 'opencode.json': JSON.stringify(projectConfig) },
    });
    expectLoop(out);
  });
});
