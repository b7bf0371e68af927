// npm run bench:agent-long [-- options]: the long agent transcript through the real agent loop
// (extension/agent/loop.ts: its context budget, stubs, summaries) on Strata and on llama-server
// (built from the same pinned llama.cpp, --jinja), one server after the other, same model,
// threads and context per slot. The loop takes any OpenAI-compatible server: it reads the context
// per slot from Strata's /v1/models or llama-server's /props, and counts messages with each
// server's own tokenizer endpoint (/v1/tokenize, /tokenize).
// The transcript: STEPS forced calls (tool_choice "required"; one tool) of a tool whose results,
// ~150 tokens each, add up to several contexts, then a plain answer. Where a server answers a
// forced step without a call, the loop gets the fixture's call instead (counted in the report). Random-weight model
// (Qwen2.5's tokenizer and template, the hermes tool format): what is measured is the budget and
// the KV the loop makes each server re-read, not judgement. Every request is greedy and bans the
// tokens that are not valid UTF-8 alone (llama-server ends such answers with HTTP 500), on both.
// Figures per server: completes or not; prompt tokens computed (the loop's count from usage, and
// the server's own counter) against the minimum (each step's new tokens once); compactions and
// what each re-read.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { optInt, optList, optString, parseArgs, UsageError } from '../backend/args/args.js';
import { rejectUnknownOptions, runBench } from '../backend/args/command-usage.js';
import { banBias, countTokens, scrapePromptComputed, tokenizePath, type Target } from '../backend/bench/client.js';
import { invalidUtf8TokensOf } from '../backend/bench/utf8-tokens.js';
import { llamaServerBinary } from './bench-compare/compare-main.js';
import { modelLoaded, ServerProcess, type LaunchSpec } from './bench-compare/launch.js';
import { ensureModel } from '../backend/models/stand-in.js';
import type { ChatMessage } from '../contract/chat.js';
import { freePort } from '../common/net/free-port.js';
import { AgentLoop, type AgentEvent } from '../extension/agent/loop.js';
import { NodeWorkspace } from '../extension/agent/node-workspace.js';
import { WorkspacePaths } from '../extension/agent/paths.js';
import { ToolRegistry } from '../extension/agent/registry.js';
import type { AgentTool } from '../extension/agent/types.js';
import { StrataClient, type ChatEvent } from '../extension/client/client.js';
import type { ChatCall } from '../extension/client/types.js';

const usage = `usage: npm run bench:agent-long [-- options]

  --servers A,B    strata,llama-server (default: both, in this order)
  --steps N        forced tool calls before the answer (default 40)
  --ctx N          context per slot, one slot each (default 2048)
  --max-tokens N   answer cap of each step (default 40; compaction keeps room for it)
  --threads T      threads of both servers (default: all cores)
  --model FILE     a GGUF whose chat template renders tools (default: the tiny stand-in with
                   Qwen2.5's tokenizer and template, q8_0, made once and cached)
  --out DIR        where the JSON and markdown go (default test-output/bench)
`;

const OPTIONS = ['servers', 'steps', 'ctx', 'max-tokens', 'threads', 'model', 'out', 'help'];
const SERVERS = ['strata', 'llama-server'] as const;
type ServerName = (typeof SERVERS)[number];

function log(m: string): void { process.stderr.write(`[bench:agent-long] ${m}\n`); }

/** A chunk of ~150 tokens, different at every call (the same text on every server). */
const chunk = (k: number): string => `part ${k}:\n${Array.from({ length: 40 }, (_, i) => `w${k}x${i}`).join(' ')}`;

interface SideResult {
  server: ServerName;
  end: string;
  error: string | null;
  steps: number;
  calls: number;
  /** Forced steps answered with the model's own call, and with the fixture's (the model wrote none). */
  ownCalls: number;
  fixtureCalls: number;
  seconds: number;
  ctx: number | null;
  resultTokens: number;
  requests: number;
  promptTokens: number;
  /** The loop's count: prompt tokens less the cached ones, from each answer's usage. */
  computed: number;
  /** The server's own counter of prompt tokens computed (/metrics), over the run. */
  serverComputed: number;
  minimum: number;
  compactions: Array<{ kind: string; before: number; after: number; reread: number }>;
  rereadElsewhere: number;
  load: number[];
}

export function main(argv: string[], root: string): Promise<number> {
  return runBench('agent-long', usage, () => bench(argv, root));
}

/** Adds the ban and greedy sampling to every chat request the loop sends (both servers alike). */
function biasedFetch(banned: readonly number[] | null): typeof fetch {
  return async (input, init) => {
    const url = String(input instanceof Request ? input.url : input);
    if (url.endsWith('/v1/chat/completions') && typeof init?.body === 'string') {
      const body = JSON.parse(init.body) as Record<string, unknown>;
      init = { ...init, body: JSON.stringify({ ...body, temperature: 0, ...banBias(banned) }) };
    }
    return fetch(input, init);
  };
}

/**
 * The loop's client, with the fixture's call where a forced step's answer has none: llama-server's
 * tool_choice "required" is not enforced for this template in the pinned build (its template
 * analysis finds no tool-call format, so no grammar; the answer is free text). The server still
 * reads the prompt and writes its answer; only what the loop carries back is the fixture's call,
 * as a client would send it.
 */
function forcedCalls(client: StrataClient, count: { own: number; fixture: number }): Pick<StrataClient, 'chatStream'> {
  return {
    async *chatStream(req: ChatCall, signal: AbortSignal): AsyncGenerator<ChatEvent> {
      if (req.toolChoice !== 'required') { yield* client.chatStream(req, signal); return; }
      const calls: ChatEvent[] = [];
      let done: ChatEvent | null = null;
      for await (const ev of client.chatStream(req, signal)) {
        if (ev.type === 'toolCall') calls.push(ev);
        else if (ev.type === 'done') done = ev;
      }
      if (calls.length === 1) { count.own++; yield calls[0]!; }
      else { count.fixture++; yield { type: 'toolCall', call: { id: `call${count.own + count.fixture}`, name: 'read_chunk', arguments: '{}' } }; }
      if (done) yield done;
    },
  };
}

async function runLoop(name: ServerName, target: Target, steps: number, maxTokens: number, banned: readonly number[] | null): Promise<SideResult> {
  const path = await tokenizePath(target);
  if (!path) throw new Error(`${name} has no tokenize endpoint`);
  const count = (text: string): Promise<number> => countTokens(target, path, text);
  const client = new StrataClient({ baseUrl: target.url, fetch: biasedFetch(banned), timeoutMs: 600_000 });
  const forced = { own: 0, fixture: 0 };
  let calls = 0;
  const readChunk: AgentTool = {
    name: 'read_chunk', description: 'Reads the next part of the document.', kind: 'read',
    parameters: { type: 'object', properties: {}, additionalProperties: false },
    run: async () => ({ type: 'text', text: chunk(++calls) }),
  };
  const ws = mkdtempSync(join(tmpdir(), 'strata-bench-agent-long-'));
  const paths = new WorkspacePaths([{ name: 'ws', path: ws }]);
  const events: AgentEvent[] = [];
  const loop = new AgentLoop({
    client: forcedCalls(client, forced), tools: new ToolRegistry([readChunk]), workspace: new NodeWorkspace(paths, { exclude: () => [] }), paths,
    approvals: { allowTool: async () => true, review: async (c) => c.map(() => false), allowCommand: async () => false },
    settings: { maxSteps: steps + 1, autoApproveReadOnly: true, allowedCommands: [], maxResultTokens: 400 },
    // "required" with one tool forces it on both servers (llama-server takes no named tool_choice).
    toolChoice: (step) => (step <= steps ? 'required' : 'none'),
    maxTokens,
    countTokens: (text) => count(text),
    contextWindow: (signal) => client.chatSlotContext(signal),
    onEvent: (e) => {
      events.push(e);
      if (e.type === 'compaction') log(`  ${name}: compaction after ${e.compaction.afterSteps} steps, ${e.compaction.before} → ${e.compaction.after} tokens (${e.compaction.summary === null ? 'stubs' : 'summary'})`);
    },
  });
  const question: ChatMessage[] = [
    { role: 'system', content: 'You are an agent. Read the document part by part.' },
    { role: 'user', content: 'Read the whole document, then say what it is about.' },
  ];
  const before = await scrapePromptComputed(target);
  const started = Date.now();
  try {
    const run = await loop.run(question, new AbortController().signal);
    const seconds = (Date.now() - started) / 1000;
    const after = await scrapePromptComputed(target);
    if (before === null || after === null) throw new Error(`${name} reports no prompt-token counter (llama-server needs --metrics)`);
    let resultTokens = 0;
    for (const m of run.messages) if (m.role === 'tool') resultTokens += await count(m.content);
    const s = run.context;
    return {
      server: name, end: run.end, error: run.error, steps: run.steps, calls, ownCalls: forced.own, fixtureCalls: forced.fixture, seconds, ctx: s.ctx, resultTokens,
      requests: s.requests, promptTokens: s.promptTokens, computed: s.computedTokens, serverComputed: after - before, minimum: s.newTokens,
      compactions: s.compactions.map((c) => ({ ...c })), rereadElsewhere: s.rereadElsewhere, load: loadavg(),
    };
  } finally {
    rmSync(ws, { recursive: true, force: true });
  }
}

async function bench(argv: string[], root: string): Promise<number> {
  const args = parseArgs(argv);
  if (args.options.has('help')) { process.stdout.write(usage); return 0; }
  rejectUnknownOptions(args, OPTIONS);
  const names = (optList(args, 'servers') ?? [...SERVERS]) as ServerName[];
  for (const n of names) if (!SERVERS.includes(n)) throw new UsageError(`--servers: unknown '${n}' (${SERVERS.join(', ')})`);
  const steps = optInt(args, 'steps', 1, 10_000) ?? 40;
  const ctx = optInt(args, 'ctx', 512, 1 << 22) ?? 2048;
  const maxTokens = optInt(args, 'max-tokens', 1, 4096) ?? 40;
  const threads = optInt(args, 'threads', 1, 1024) ?? availableParallelism();
  const outDir = resolve(root, optString(args, 'out') ?? join('test-output', 'bench'));
  mkdirSync(outDir, { recursive: true });
  const model = optString(args, 'model')
    ?? await ensureModel({ vocab: 'qwen2.5-coder', shape: 'tiny', quant: 'q8_0', seed: 1, chatTemplate: 'Qwen-Qwen2.5-7B-Instruct' });
  const banned = await invalidUtf8TokensOf(model);
  const bin = names.includes('llama-server') ? llamaServerBinary(root) : '';
  const scratch = mkdtempSync(join(tmpdir(), 'strata-bench-agent-long-sessions-'));
  const startedAt = new Date();
  const results: SideResult[] = [];
  try {
    for (const name of names) {
      const port = await freePort();
      const url = `http://127.0.0.1:${port}`;
      const spec: LaunchSpec = name === 'strata'
        ? {
          name, command: process.execPath, url, logFile: join(outDir, 'agent-long-strata.log'),
          args: [join(root, 'dist', 'strata.mjs'), 'serve', '--model', model, '--port', String(port), '--slots', '1', '--ctx', String(ctx),
            '--threads', String(threads), '--sessions-dir', scratch],
        }
        : {
          name, command: bin, url, logFile: join(outDir, 'agent-long-llama-server.log'),
          args: ['-m', model, '--host', '127.0.0.1', '--port', String(port), '-t', String(threads), '-tb', String(threads), '-c', String(ctx),
            '-np', '1', '--jinja', '--no-webui', '--metrics'],
        };
      log(`starting ${name}: ${spec.command} ${spec.args.join(' ')}`);
      const server = await ServerProcess.start(spec);
      try {
        await modelLoaded({ url, model: 'bench' });
        log(`${name}: ${steps} forced steps, then the answer, ${ctx} tokens per slot`);
        const r = await runLoop(name, { url, model: 'bench' }, steps, maxTokens, banned);
        results.push(r);
        log(`${name}: ${r.end} after ${r.steps} steps in ${r.seconds.toFixed(0)} s; computed ${r.computed} (server ${r.serverComputed}) of minimum ${r.minimum}; ${r.compactions.length} compactions`);
      } finally {
        await server.stop();
      }
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  const command = `npm run bench:agent-long -- ${argv.join(' ')}`.trim();
  const md = report(results, { command, startedAt, model, threads, ctx, steps, maxTokens });
  const stamp = startedAt.toISOString().replace(/[-:]/g, '').slice(0, 15);
  writeFileSync(join(outDir, `agent-long-${stamp}.json`), `${JSON.stringify({ format: 'strata-bench-agent-long/1', date: startedAt.toISOString(), command, results }, null, 2)}\n`);
  writeFileSync(join(outDir, 'agent-long-latest.md'), md);
  process.stdout.write(md);
  return results.every((r) => completed(r, steps)) ? 0 : 1;
}

const completed = (r: SideResult, steps: number): boolean => r.end === 'answer' && r.error === null && r.calls === steps && r.steps === steps + 1;

function report(results: SideResult[], c: { command: string; startedAt: Date; model: string; threads: number; ctx: number; steps: number; maxTokens: number }): string {
  const cell = (f: (r: SideResult) => string) => results.map(f).join(' | ');
  const ratio = (n: number, d: number) => (d > 0 ? `${(n / d).toFixed(2)}×` : 'n/a');
  const maxReread = (r: SideResult) => Math.max(0, ...r.compactions.map((x) => x.reread));
  const lines = [
    '# Long agent transcript through the agent loop', '',
    `${c.startedAt.toISOString()} · \`${c.command}\``, '',
    `Model ${c.model.split('/').pop()}, ${c.threads} threads, one slot of ${c.ctx} tokens each, ${c.steps} forced steps then the answer, answers up to ${c.maxTokens} tokens; `
      + `${cpus().length} × ${cpus()[0]?.model ?? ''}; load average at the end ${loadavg().map((x) => x.toFixed(2)).join(' / ')}.`, '',
    `| figure | ${results.map((r) => r.server).join(' | ')} |`, `|:---|${results.map(() => '---:').join('|')}|`,
    `| completes (every forced call, then the answer) | ${cell((r) => `${completed(r, c.steps) ? 'yes' : `no (${r.end}${r.error ? `: ${r.error.slice(0, 120)}` : ''})`}, ${r.steps} steps, ${r.calls} calls`)} |`,
    `| forced calls: the model's own; the fixture's | ${cell((r) => `${r.ownCalls}; ${r.fixtureCalls}`)} |`,
    `| context per slot (from the server) | ${cell((r) => String(r.ctx ?? 'not reported'))} |`,
    `| tool results | ${cell((r) => `${r.resultTokens} tokens (${r.ctx ? (r.resultTokens / r.ctx).toFixed(1) : '?'}× the context)`)} |`,
    `| requests (steps and summaries) | ${cell((r) => String(r.requests))} |`,
    `| prompt tokens sent | ${cell((r) => String(r.promptTokens))} |`,
    `| prompt tokens computed (usage; server counter) | ${cell((r) => `${r.computed}; ${r.serverComputed}`)} |`,
    `| minimum (each step's new tokens once) | ${cell((r) => String(r.minimum))} |`,
    `| computed / minimum (server counter) | ${cell((r) => ratio(r.serverComputed, r.minimum))} |`,
    `| compactions | ${cell((r) => `${r.compactions.length} (${r.compactions.filter((x) => x.kind === 'stubs').length} stubs, ${r.compactions.filter((x) => x.kind === 'summary').length} summaries)`)} |`,
    `| re-read per compaction, largest (of a context) | ${cell((r) => `${maxReread(r)} (${r.ctx ? (maxReread(r) / r.ctx).toFixed(2) : '?'})`)} |`,
    `| re-read outside compactions | ${cell((r) => String(r.rereadElsewhere))} |`,
    `| wall time | ${cell((r) => `${r.seconds.toFixed(0)} s`)} |`,
  ];
  for (const r of results) lines.push('', `${r.server} compactions: ${r.compactions.map((x) => `${x.kind} ${x.before}→${x.after}, re-read ${x.reread}`).join('; ') || 'none'}`);
  return `${lines.join('\n')}\n`;
}
