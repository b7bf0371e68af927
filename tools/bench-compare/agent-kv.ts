// Agent KV: scripted agent transcripts (agent-fixture.ts) sent step by step, the transcripts
// interleaved (step k of each, then step k+1 of each) on fewer slots than transcripts, one request
// at a time. Each request is the conversation so far: system, task, and every earlier step's call
// and result. Figure: prompt tokens the server computed (its own counter) against the minimum, what
// a server that kept every conversation reads: each transcript's last prompt once, less what the
// model wrote itself and the next prompt carries back (with `calls: 'model'`).
//   calls 'fixture': every step's call is the fixture's (the model's answer is thrown away), so
//     the prompts are the same on every server;
//   calls 'model': the model's own call (tool_choice "required") is carried back with the fixture's
//     result, as a real agent does: a server that re-renders a call differently from how the model
//     wrote it reads the call again at every step.
import { banBias, BenchHttpError, postJson, scrapePromptComputed, type Target } from '../../backend/bench/client.js';
import { AGENT_TOOLS, type AgentTranscript, type ChatMessage } from './agent-fixture.js';

export interface AgentKvRun {
  target: Target;
  transcripts: AgentTranscript[];
  calls: 'fixture' | 'model';
  banned: readonly number[] | null;
  /** Tokens each answer may have (fixture calls: a few; model calls: enough for one call). */
  maxTokens: number;
  onProgress?: (done: number, total: number) => void;
}

export interface AgentKvResult {
  computed: number;
  minimum: number;
  requests: number;
  failed: number;
  /** Per request, in order: transcript, step, prompt tokens, tokens computed, tokens the model wrote. */
  steps: Array<{ transcript: number; step: number; prompt: number; computed: number; completion: number }>;
  failures: string[];
}

interface Answer { prompt: number; completion: number; calls: NonNullable<ChatMessage['tool_calls']> }

async function ask(run: AgentKvRun, messages: ChatMessage[]): Promise<Answer> {
  const body = {
    model: run.target.model, messages, tools: AGENT_TOOLS, temperature: 0, max_tokens: run.maxTokens, parallel_tool_calls: false,
    tool_choice: run.calls === 'model' ? 'required' : 'auto', ...banBias(run.banned),
  };
  const r = await postJson(run.target, '/v1/chat/completions', body, AbortSignal.timeout(600_000)) as {
    usage?: { prompt_tokens?: number; completion_tokens?: number }; choices?: Array<{ message?: { tool_calls?: Answer['calls'] } }>;
  };
  return { prompt: r.usage?.prompt_tokens ?? 0, completion: r.usage?.completion_tokens ?? 0, calls: r.choices?.[0]?.message?.tool_calls ?? [] };
}

export async function runAgentKv(run: AgentKvRun): Promise<AgentKvResult> {
  const convs: ChatMessage[][] = run.transcripts.map((t) => [{ role: 'system', content: t.system }, { role: 'user', content: t.task }]);
  const out: AgentKvResult = { computed: 0, minimum: 0, requests: 0, failed: 0, steps: [], failures: [] };
  const stepsPer = Math.min(...run.transcripts.map((t) => t.steps.length));
  const total = (stepsPer + 1) * run.transcripts.length;
  // What the model wrote that the next prompt carries back, per transcript (a perfect cache keeps it).
  const carried = run.transcripts.map(() => 0);
  const last = run.transcripts.map(() => 0);
  for (let k = 0; k <= stepsPer; k++) {
    for (const [t, tr] of run.transcripts.entries()) {
      const before = await scrapePromptComputed(run.target);
      let a: Answer;
      try {
        a = await ask(run, convs[t]!);
      } catch (e) {
        out.failed++;
        if (out.failures.length < 5) out.failures.push(`${e instanceof BenchHttpError ? e.message : String(e)}`.slice(0, 300));
        a = { prompt: 0, completion: 0, calls: [] };
      }
      const after = await scrapePromptComputed(run.target);
      if (before === null || after === null) throw new Error('the server reports no prompt-token counter (llama-server needs --metrics)');
      out.requests++;
      out.computed += after - before;
      out.steps.push({ transcript: t, step: k, prompt: a.prompt, computed: after - before, completion: a.completion });
      last[t] = a.prompt;
      run.onProgress?.(out.requests, total);
      if (k === stepsPer) continue;
      const s = tr.steps[k]!;
      const own = run.calls === 'model' && a.calls.length === 1 ? a.calls[0]! : null;
      if (own) carried[t]! += a.completion;
      const id = own?.id ?? `call${String(k).padStart(5, '0')}`;
      convs[t]!.push(
        { role: 'assistant', content: null, tool_calls: [own ?? { id, type: 'function', function: { name: s.call.name, arguments: JSON.stringify(s.call.arguments) } }] },
        { role: 'tool', tool_call_id: id, content: s.result },
      );
    }
  }
  out.minimum = last.reduce((sum, p, t) => sum + p - carried[t]!, 0);
  return out;
}
