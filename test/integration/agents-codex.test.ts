// Codex CLI (the npm package's native binary) against `strata serve` through `strata launch codex`:
// the Responses API, streamed, through a model provider of its config (wire_api "responses").
// `codex exec` runs without asking; its sub-agent tool is off (a sub-agent is a whole second
// loop) and so is the plugin marketplace, which it would otherwise fetch from GitHub. Codex sets
// no answer limit of its own: the server's --max-output-tokens is the bound.
import { describe, it, vi } from 'vitest';
import { clientMissing } from '../helpers/agent-run.js';
import { AGENT_PROMPT, expectLoop, runAgent } from './agent-helpers.js';

vi.setConfig({ testTimeout: 180_000 });

const missing = clientMissing('codex');

describe.skipIf(missing !== null)(`Codex CLI through strata launch${missing ? ` (skipped: ${missing})` : ''}`, () => {
  it('its first request is accepted, the forced call runs, its result goes back and the answer is printed; exit 0', async () => {
    const out = await runAgent('codex', 'responses', {
      args: (defaults) => ['-c', 'features.plugins=false', 'exec', '--skip-git-repo-check', ...(defaults ? [] : ['--disable', 'multi_agent']), AGENT_PROMPT],
    });
    expectLoop(out);
  });
});
