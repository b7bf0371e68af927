// The agent benchmarks' fixed inputs: three tools with nested schemas (objects, arrays, enums,
// required fields; string lengths bounded so a random model's strings end), and scripted agent
// transcripts: each step's tool call and tool result are fixed (results are seeded code files and
// command outputs), so both servers see the very same conversations, step by step.
import { codeLines, seedOf } from '../../backend/bench/prompts.js';

export interface BenchTool { type: 'function'; function: { name: string; description: string; parameters: Record<string, unknown> } }

export const AGENT_TOOLS: BenchTool[] = [
  {
    type: 'function',
    function: {
      name: 'edit_file', description: 'Replace exact text in a file.',
      parameters: {
        type: 'object',
        properties: {
          path: { type: 'string', maxLength: 24 },
          edits: {
            type: 'array', minItems: 1, maxItems: 3,
            items: {
              type: 'object',
              properties: { find: { type: 'string', maxLength: 32 }, replace: { type: 'string', maxLength: 32 } },
              required: ['find', 'replace'], additionalProperties: false,
            },
          },
          mode: { enum: ['replace', 'insert_after'] },
        },
        required: ['path', 'edits'], additionalProperties: false,
      },
    },
  },
  {
    type: 'function',
    function: {
      name: 'run_command', description: 'Run a shell command in the workspace.',
      parameters: {
        type: 'object',
        properties: {
          command: { type: 'string', maxLength: 40 },
          env: {
            type: 'array', maxItems: 2,
            items: { type: 'object', properties: { name: { type: 'string', pattern: '^[A-Z_]{1,12}$' }, value: { type: 'string', maxLength: 16 } }, required: ['name', 'value'], additionalProperties: false },
          },
          timeout_s: { type: 'integer', minimum: 1, maximum: 600 },
        },
        required: ['command'], additionalProperties: false,
      },
    },
  },
  {
    type: 'function',
    function: {
      name: 'search', description: 'Search the workspace.',
      parameters: {
        type: 'object',
        properties: {
          query: { type: 'string', maxLength: 32 },
          scope: {
            type: 'object',
            properties: { kind: { enum: ['file', 'dir', 'workspace'] }, paths: { type: 'array', items: { type: 'string', maxLength: 24 }, maxItems: 3 } },
            required: ['kind'], additionalProperties: false,
          },
          limit: { type: 'integer', minimum: 1, maximum: 50 },
          case_sensitive: { type: 'boolean' },
        },
        required: ['query', 'scope'], additionalProperties: false,
      },
    },
  },
];

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string | null;
  tool_calls?: Array<{ id: string; type: 'function'; function: { name: string; arguments: string } }>;
  tool_call_id?: string;
}

/** One scripted step: the call the agent made and what the tool answered. */
export interface AgentStep { call: { name: string; arguments: Record<string, unknown> }; result: string }

export interface AgentTranscript { system: string; task: string; steps: AgentStep[] }

const TASKS = ['Fix the failing date test in src/time.', 'Add retries to the HTTP client.', 'Rename Config to Settings everywhere.'];

/**
 * `count` transcripts of `steps` steps, each result `resultLines` lines: the calls cycle through
 * search, reading a file (run_command cat), editing it and running the tests, as agents do.
 * `salt` starts each system prompt (new per run, so no run reuses another's cache).
 */
export function agentTranscripts(count: number, steps: number, resultLines: number, salt: string): AgentTranscript[] {
  return Array.from({ length: count }, (_, t) => {
    const file = (k: number) => `src/mod${t}_${k}.ts`;
    const out: AgentStep[] = [];
    for (let k = 0; k < steps; k++) {
      const lines = codeLines(seedOf(`agent/${t}/${k}`), resultLines);
      switch (k % 4) {
        case 0:
          out.push({ call: { name: 'search', arguments: { query: `mod${t} step ${k}`, scope: { kind: 'workspace' }, limit: 20 } }, result: lines.map((l, i) => `${file(k)}:${i + 1}: ${l}`).join('\n') });
          break;
        case 1:
          out.push({ call: { name: 'run_command', arguments: { command: `cat ${file(k - 1)}` } }, result: lines.join('\n') });
          break;
        case 2:
          out.push({ call: { name: 'edit_file', arguments: { path: file(k - 2), edits: [{ find: lines[0]!.slice(0, 24), replace: 'const fixed = true;' }] } }, result: `Applied 1 edit to ${file(k - 2)}.\n${lines.slice(0, 8).join('\n')}` });
          break;
        default:
          out.push({ call: { name: 'run_command', arguments: { command: 'npm test', env: [{ name: 'CI', value: '1' }], timeout_s: 120 } }, result: lines.map((l, i) => (i % 5 === 0 ? `FAIL ${file(k - 3)} > case ${i}` : `  ${l}`)).join('\n') });
      }
    }
    return { system: `[${salt}/${t}] You are a coding agent working in a TypeScript repository. Use the tools; answer when done.`, task: TASKS[t % TASKS.length]!, steps: out };
  });
}

/** The conversation up to (not including) step `k`'s call: what the agent sends for step k. */
export function messagesBefore(tr: AgentTranscript, k: number, idOf: (step: number) => string = (i) => `call${String(i).padStart(5, '0')}`): ChatMessage[] {
  const msgs: ChatMessage[] = [{ role: 'system', content: tr.system }, { role: 'user', content: tr.task }];
  for (let i = 0; i < k; i++) {
    const s = tr.steps[i]!;
    const id = idOf(i);
    msgs.push({ role: 'assistant', content: null, tool_calls: [{ id, type: 'function', function: { name: s.call.name, arguments: JSON.stringify(s.call.arguments) } }] });
    msgs.push({ role: 'tool', tool_call_id: id, content: s.result });
  }
  return msgs;
}
