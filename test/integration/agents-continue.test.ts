// Continue's CLI (cn, a Node program) against `strata serve` through `strata launch continue`:
// OpenAI chat completions, streamed, through the config file strata launch writes. In print mode
// (-p) it runs the tools it allows without asking; all but Read and List are left out here (the
// others ask a question, end the session, run commands or fetch pages). NODE_ENV=test is the only
// way to keep it from asking api.continue.dev for its latest version at start.
import { describe, it, vi } from 'vitest';
import { clientMissing } from '../helpers/agent-run.js';
import { AGENT_PROMPT, expectLoop, runAgent } from './agent-helpers.js';

vi.setConfig({ testTimeout: 180_000 });

const missing = clientMissing('continue');
const leftOut = ['Bash', 'Fetch', 'Checklist', 'CheckBackgroundJob', 'AskQuestion', 'Exit', 'Skills'];

describe.skipIf(missing !== null)(`Continue CLI through strata launch${missing ? ` (skipped: ${missing})` : ''}`, () => {
  it('its first request is accepted, the forced call runs, its result goes back and the answer is printed; exit 0', async () => {
    const out = await runAgent('continue', 'chat', {
      args: (defaults) => ['-p', AGENT_PROMPT, ...(defaults ? [] : leftOut.flatMap((t) => ['--exclude', t]))],
      env: { NODE_ENV: 'test' },
    });
    expectLoop(out);
  });
});
