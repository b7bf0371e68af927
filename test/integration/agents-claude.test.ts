// Claude Code (the npm package's native binary) against `strata serve` through `strata launch
// claude`: Anthropic Messages, streamed, with its whole system prompt and its default tools less
// Agent (a sub-agent is a whole second loop). In print mode (-p) a tool that needs permission is
// refused without asking, so the random call reads a path of the model's choosing or is refused;
// either way its result goes back. CLAUDE_CODE_MAX_OUTPUT_TOKENS is its own limit on an answer
// (Claude Code exits 1 when an answer is cut there; the test model ends its answers long before).
import { describe, it, vi } from 'vitest';
import { clientMissing } from '../helpers/agent-run.js';
import { AGENT_PROMPT, expectLoop, runAgent } from './agent-helpers.js';

vi.setConfig({ testTimeout: 180_000 });

const missing = clientMissing('claude');

describe.skipIf(missing !== null)(`Claude Code through strata launch${missing ? ` (skipped: ${missing})` : ''}`, () => {
  it('its first request is accepted, the forced call runs, its result goes back and the answer is printed; exit 0', async () => {
    const out = await runAgent('claude', 'messages', {
      args: (defaults) => ['-p', AGENT_PROMPT, ...(defaults ? [] : ['--disallowedTools', 'Agent'])],
      env: { CLAUDE_CODE_MAX_OUTPUT_TOKENS: '2048' },
    });
    expectLoop(out);
  });
});
