// `npm run bench:agents`: the coding agents' recorded sessions (agents-replay.ts), each client's
// requests as it sends them, on Strata and on llama-server (built from the same pinned llama.cpp,
// `--jinja`) with the same GGUF, threads, slots and context. Per client and server, each run:
//   - the first request (turn 1, its system prompt salted so nothing is cached): accepted or not,
//     and its TTFT alone; for Codex also with its namespaces' functions as plain function tools,
//     so both servers read the same tools;
//   - turn 1 again (salted anew) sent beside the client's own side request (opencode's title,
//     Claude Code's summary, when the recording has one), its TTFT;
//   - a session of --turns turns (the recorded ones, then more in the client's format; the side
//     request beside turn 1): prompt tokens each server computed (its own counter) against the new
//     tokens of each turn after the first;
//   - both servers restarted, the first request of a second session of the same client (its
//     recorded one, with this run's salt): Strata loads its prefix cache, llama-server has none.
// Runs alternate the servers (run r: A then B, run r+1: B then A); one server gets requests at a
// time. TTFTs are the best of the runs; token figures the median. Every request bans the tokens
// that are not valid UTF-8 alone (llama-server's output parser ends such answers with HTTP 500).
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { optInt, optList, optString, parseArgs, UsageError } from '../../backend/args/args.js';
import { rejectUnknownOptions, runBench } from '../../backend/args/command-usage.js';
import { banBias, scrapePromptComputed, type Target } from '../../backend/bench/client.js';
import { median } from '../../backend/bench/stats.js';
import { fmt, markdownTable } from '../../backend/bench/table.js';
import { invalidUtf8TokensOf } from '../../backend/bench/utf8-tokens.js';
import { freePort } from '../../common/net/free-port.js';
import { AGENT_CLIENTS, functionsOnly, loadAgentSession, prepared, replay, salted, sessionTurns, type AgentClient, type AgentSession, type Json, type Replayed } from './agents-replay.js';
import { llamaServerBinary } from './compare-main.js';
import { modelLoaded, ServerProcess, type LaunchSpec } from './launch.js';

const usage = `usage: npm run bench:agents [-- options]

  --clients A,B     claude,codex,opencode,continue (default: all)
  --runs N          runs per client and server, alternating (default 3; TTFTs are the best run)
  --turns N         turns of the replayed session (default 6)
  --max-tokens N    answer cap of every request (default 8)
  --slots N         slots of both servers (default 2)
  --ctx N           context per slot (default 32768; llama-server gets -c ctx*slots)
  --threads T       threads of both servers (default: all cores)
  --cache-ram N     llama-server's --cache-ram, MiB (default 2048; Strata keeps its own defaults)
  --model FILE      a GGUF whose chat template renders tools, trained for --ctx (default: the tiny
                    stand-in with Qwen2.5's tokenizer and template, 32K training context, made once)
  --out DIR         where the JSON and markdown go (default test-output/bench)

Progress goes to stderr; the table to stdout and DIR/agents-latest.md.
`;

const OPTIONS = ['clients', 'runs', 'turns', 'max-tokens', 'slots', 'ctx', 'threads', 'cache-ram', 'model', 'out', 'help'];

function log(m: string): void { process.stderr.write(`[bench:agents] ${m}\n`); }

/** What one run of one client on one server measured. */
interface RunFigures {
  status: number;
  error: string | null;
  aloneMs: number;
  /** Turn 1's prompt tokens as this server renders the request (servers render tools differently). */
  alonePrompt: number | null;
  /** Turn 1 alone with its namespaces' functions as plain functions (null: all its tools are functions). */
  sameToolsMs: number | null;
  sameToolsPrompt: number | null;
  besideMs: number | null;
  /** Turns 2..n: tokens the server computed, and the new tokens of each turn. */
  computed: number;
  newTokens: number;
  turnPrompts: number[];
  secondMs: number;
  secondCached: number | null;
  secondStatus: number;
}

interface Side { name: 'strata' | 'llama-server'; spec: LaunchSpec; server: ServerProcess | null; target: Target; runs: Map<AgentClient, RunFigures[]> }

export function main(argv: string[], root: string): Promise<number> {
  return runBench('agents', usage, () => bench(argv, root));
}

async function defaultModel(ctx: number): Promise<string> {
  const { ensureModel } = await import('../../backend/models/stand-in.js');
  log(`tiny stand-in (Qwen2.5's tokenizer and chat template, random weights, q8_0, ${ctx}-token training context): made once, then cached`);
  return ensureModel({ vocab: 'qwen2.5-coder', shape: 'tiny', quant: 'q8_0', seed: 1, chatTemplate: 'Qwen-Qwen2.5-7B-Instruct', ctxTrain: ctx });
}

async function bench(argv: string[], root: string): Promise<number> {
  const args = parseArgs(argv);
  if (args.options.has('help')) { process.stdout.write(usage); return 0; }
  rejectUnknownOptions(args, OPTIONS);
  const clients = (optList(args, 'clients') ?? [...AGENT_CLIENTS]) as AgentClient[];
  for (const c of clients) if (!AGENT_CLIENTS.includes(c)) throw new UsageError(`--clients: unknown '${c}' (${AGENT_CLIENTS.join(', ')})`);
  const runs = optInt(args, 'runs', 1, 100) ?? 3;
  const turns = optInt(args, 'turns', 2, 100) ?? 6;
  const maxTokens = optInt(args, 'max-tokens', 1, 4096) ?? 8;
  const slots = optInt(args, 'slots', 2, 256) ?? 2;
  const ctx = optInt(args, 'ctx', 4096, 1 << 22) ?? 32768;
  const threads = optInt(args, 'threads', 1, 1024) ?? availableParallelism();
  const cacheMib = optInt(args, 'cache-ram', 0, 1 << 20) ?? 2048;
  const outDir = resolve(root, optString(args, 'out') ?? join('test-output', 'bench'));
  mkdirSync(outDir, { recursive: true });
  const sessions = new Map(clients.map((c) => [c, loadAgentSession(root, c)]));

  const bin = llamaServerBinary(root);
  const model = optString(args, 'model') ?? await defaultModel(ctx);
  if (!existsSync(model)) throw new UsageError(`--model: no such file: ${model}`);
  const ban = banBias(await invalidUtf8TokensOf(model));
  const scratch = mkdtempSync(join(tmpdir(), 'strata-bench-agents-'));
  const [portA, portB] = [await freePort(), await freePort()];
  const sides: [Side, Side] = [
    {
      name: 'strata', server: null, target: { url: `http://127.0.0.1:${portA}`, model: 'bench' }, runs: new Map(),
      spec: {
        name: 'strata', command: process.execPath, url: `http://127.0.0.1:${portA}`, logFile: '',
        args: [join(root, 'dist', 'strata.mjs'), 'serve', '--model', model, '--port', String(portA), '--slots', String(slots), '--ctx', String(ctx),
          '--threads', String(threads), '--sessions-dir', join(scratch, 'sessions'),
          '--prefix-cache-dir', join(scratch, 'prefix-cache'), '--prefix-cache-mib', '4096'],
      },
    },
    {
      name: 'llama-server', server: null, target: { url: `http://127.0.0.1:${portB}`, model: 'bench' }, runs: new Map(),
      spec: {
        name: 'llama-server', command: bin, url: `http://127.0.0.1:${portB}`, logFile: '',
        args: ['-m', model, '--host', '127.0.0.1', '--port', String(portB), '-t', String(threads), '-tb', String(threads), '-c', String(ctx * slots),
          '-np', String(slots), '--jinja', '--no-webui', '--metrics', '--cache-ram', String(cacheMib)],
      },
    },
  ];
  let starts = 0;
  const start = async (side: Side) => {
    log(`starting ${side.name}: ${side.spec.command} ${side.spec.args.join(' ')}`);
    // A log per start: a restart would write over the one before.
    side.server = await ServerProcess.start({ ...side.spec, logFile: join(outDir, `agents-${side.name}-${++starts}.log`) });
    await modelLoaded(side.target);
  };
  const startedAt = new Date();
  const loads: number[] = [];
  try {
    for (const side of sides) await start(side);
    for (let run = 0; run < runs; run++) {
      for (const client of clients) {
        const salt = randomBytes(4).toString('hex');
        for (const side of run % 2 === 0 ? sides : [sides[1], sides[0]]) {
          log(`run ${run + 1}/${runs} ${client} on ${side.name} (load ${loadavg()[0]!.toFixed(2)})`);
          loads.push(loadavg()[0]!);
          const f = await measure(side, sessions.get(client)!, { salt, turns, maxTokens, ban }, () => restart(side));
          const list = side.runs.get(client) ?? [];
          list.push(f);
          side.runs.set(client, list);
          log(`  ${side.name} ${client}: status ${f.status}, TTFT alone ${fmt(f.aloneMs)} ms, beside ${f.besideMs === null ? 'n/a' : fmt(f.besideMs)} ms, `
            + `computed ${f.computed} of ${f.newTokens} new, second session ${fmt(f.secondMs)} ms (cached ${f.secondCached ?? '?'})${f.error ? `; ${f.error}` : ''}`);
        }
      }
    }
  } finally {
    await Promise.allSettled(sides.map((s) => s.server?.stop()));
    rmSync(scratch, { recursive: true, force: true });
  }
  async function restart(side: Side): Promise<void> {
    await side.server?.stop();
    await start(side);
  }

  const command = `npm run bench:agents -- ${argv.join(' ')}`.trim();
  const md = report(sides, clients, sessions, { command, startedAt, model, threads, slots, ctx, runs, turns, maxTokens, loads });
  const jsonFile = join(outDir, `agents-${startedAt.toISOString().replace(/[-:]/g, '').slice(0, 15)}.json`);
  writeFileSync(jsonFile, `${JSON.stringify({
    format: 'strata-bench-agents/1', date: startedAt.toISOString(), command, model,
    sides: sides.map((s) => ({ name: s.name, runs: Object.fromEntries(s.runs) })),
  }, null, 2)}\n`);
  writeFileSync(join(outDir, 'agents-latest.md'), md);
  process.stdout.write(md);
  log(`wrote ${jsonFile} and ${join(outDir, 'agents-latest.md')}`);
  return 0;
}

interface MeasureOptions { salt: string; turns: number; maxTokens: number; ban: Record<string, unknown> }

/** One run of one client's recorded session on one server (see the header). */
async function measure(side: Side, s: AgentSession, o: MeasureOptions, restart: () => Promise<void>): Promise<RunFigures> {
  const t = side.target;
  const send = (body: Record<string, Json>, salt: string): Promise<Replayed> =>
    replay(t, s.dialect, s.path, prepared(s.dialect, salted(s.dialect, body, salt), { model: t.model, maxTokens: o.maxTokens, extra: o.ban }));
  const errorOf = (r: Replayed) => (r.status !== 200 || r.error ? `${r.status}: ${r.error ?? ''}`.slice(0, 300) : null);
  // Turn 1 alone, cold.
  const alone = await send(s.turns[0]!, `${o.salt}-alone-${side.name}`);
  let error = errorOf(alone);
  const flat = functionsOnly(s.dialect, s.turns[0]!);
  const sameTools = flat ? await send(flat, `${o.salt}-functions-${side.name}`) : null;
  if (sameTools) error ??= errorOf(sameTools);
  // Turn 1 beside its side request: the side request goes first, as the clients send it.
  let besideMs: number | null = null;
  if (s.side) {
    const salt = `${o.salt}-beside-${side.name}`;
    const sideReq = send(s.side, salt);
    const main = await send(s.turns[0]!, salt);
    error ??= errorOf(main) ?? errorOf(await sideReq);
    await sideReq;
    besideMs = main.ttftMs;
  }
  // The session: turn 1 with its side request, then each turn after the answer to the one before.
  const bodies = sessionTurns(s, o.turns);
  const sessionSalt = `${o.salt}-session`;
  const sideFirst = s.side ? send(s.side, `${sessionSalt}-side`) : null;
  const first = await send(bodies[0]!, sessionSalt);
  if (sideFirst) await sideFirst;
  error ??= errorOf(first);
  const prompts = [first.prompt ?? 0];
  let computed = 0;
  let newTokens = 0;
  for (const body of bodies.slice(1)) {
    const before = await scrapePromptComputed(t);
    const r = await send(body, sessionSalt);
    const after = await scrapePromptComputed(t);
    error ??= errorOf(r);
    const prompt = r.prompt ?? 0;
    computed += before !== null && after !== null ? after - before : prompt - (r.cached ?? 0);
    newTokens += prompt - prompts.at(-1)!;
    prompts.push(prompt);
  }
  // A second session of the same client after a restart (Strata's prefix cache is on disk).
  await restart();
  const second = await send(s.second, sessionSalt);
  error ??= errorOf(second);
  return {
    status: alone.status, error, aloneMs: alone.ttftMs, alonePrompt: alone.prompt,
    sameToolsMs: sameTools?.ttftMs ?? null, sameToolsPrompt: sameTools?.prompt ?? null, besideMs, computed, newTokens, turnPrompts: prompts,
    secondMs: second.ttftMs, secondCached: second.cached, secondStatus: second.status,
  };
}

interface ReportContext {
  command: string; startedAt: Date; model: string; threads: number; slots: number; ctx: number; runs: number; turns: number; maxTokens: number; loads: number[];
}

/** The figure rows every client gets, in order (the bench's test checks for each). */
export const AGENT_FIGURES = [
  'first request accepted',
  'main TTFT alone, ms',
  'main TTFT alone, namespaces as functions, ms',
  'main TTFT beside its side request, ms',
  'prompt tokens computed / new tokens, turns 2..n',
  'second session first TTFT, ms (after a restart)',
] as const;

function report(sides: [Side, Side], clients: AgentClient[], sessions: Map<AgentClient, AgentSession>, c: ReportContext): string {
  const [a, b] = sides;
  const best = (xs: number[]) => (xs.some(Number.isFinite) ? Math.min(...xs.filter(Number.isFinite)) : Number.NaN);
  const rows: string[][] = [];
  const ratioRow = (client: string, figure: string, x: number, y: number, target: string, met: (r: number) => boolean, cells?: [string, string]) => {
    const r = x / y;
    rows.push([client, figure, cells?.[0] ?? fmt(x), cells?.[1] ?? fmt(y), Number.isFinite(r) ? r.toFixed(2) : '-', target, Number.isFinite(r) ? (met(r) ? 'yes' : 'NO') : '-']);
  };
  for (const client of clients) {
    const ra = a.runs.get(client) ?? [];
    const rb = b.runs.get(client) ?? [];
    const statuses = (rs: RunFigures[]) => [...new Set(rs.map((r) => r.status))].join(', ') || '-';
    rows.push([client, AGENT_FIGURES[0], statuses(ra), statuses(rb), '', 'strata 200', ra.every((r) => r.status === 200) && ra.length > 0 ? 'yes' : 'NO']);
    const [aa, ab] = [best(ra.map((r) => r.aloneMs)), best(rb.map((r) => r.aloneMs))];
    const tokens = (rs: RunFigures[]) => (rs[0]?.alonePrompt ? ` (${rs[0].alonePrompt} tok)` : '');
    ratioRow(client, AGENT_FIGURES[1], aa, ab, '≤ 1.0× llama-server', (r) => r <= 1.0, [`${fmt(aa)}${tokens(ra)}`, `${fmt(ab)}${tokens(rb)}`]);
    if (ra.some((r) => r.sameToolsMs !== null)) {
      const [fa, fb] = [best(ra.map((r) => r.sameToolsMs ?? Number.NaN)), best(rb.map((r) => r.sameToolsMs ?? Number.NaN))];
      const ftok = (rs: RunFigures[]) => (rs[0]?.sameToolsPrompt ? ` (${rs[0].sameToolsPrompt} tok)` : '');
      ratioRow(client, AGENT_FIGURES[2], fa, fb, '≤ 1.0× llama-server', (r) => r <= 1.0, [`${fmt(fa)}${ftok(ra)}`, `${fmt(fb)}${ftok(rb)}`]);
    } else {
      rows.push([client, AGENT_FIGURES[2], 'all tools are functions', 'all tools are functions', '', '', '']);
    }
    if (sessions.get(client)!.side) {
      ratioRow(client, AGENT_FIGURES[3], best(ra.map((r) => r.besideMs ?? Number.NaN)), best(rb.map((r) => r.besideMs ?? Number.NaN)), '≤ 1.0× llama-server', (r) => r <= 1.0);
    } else {
      rows.push([client, AGENT_FIGURES[3], 'no side request', 'no side request', '', '', '']);
    }
    const perTurn = (rs: RunFigures[]) => median(rs.map((r) => r.computed / r.newTokens));
    const detail = (rs: RunFigures[]) => (rs.length ? `${perTurn(rs).toFixed(3)}× (${rs[0]!.computed} of ${rs[0]!.newTokens})` : '-');
    const pa = perTurn(ra);
    rows.push([client, AGENT_FIGURES[4], detail(ra), detail(rb), '', '≤ 1.05× new tokens', Number.isFinite(pa) ? (pa <= 1.05 ? 'yes' : 'NO') : '-']);
    const cached = (rs: RunFigures[]) => (rs.length ? ` (${rs.at(-1)!.secondCached ?? '?'} cached)` : '');
    const sa = best(ra.map((r) => r.secondMs));
    const sb = best(rb.map((r) => r.secondMs));
    ratioRow(client, AGENT_FIGURES[5], sa, sb, '≤ 0.2× llama-server', (r) => r <= 0.2, [`${fmt(sa)}${cached(ra)}`, `${fmt(sb)}${cached(rb)}`]);
  }
  const prompts = clients.map((cl) => `${cl} ${a.runs.get(cl)?.[0]?.turnPrompts.join('→') ?? '?'}`).join('; ');
  const failures = sides.flatMap((s) => [...s.runs.entries()].flatMap(([cl, rs]) => rs.filter((r) => r.error).map((r) => `${s.name} ${cl}: ${r.error!.replace(/\n/g, ' ')}`)));
  const cols = ['client', 'figure', 'strata', 'llama-server', 'strata / llama-server', 'target', 'met'].map((title, i) => ({ title, align: (i >= 2 && i <= 4 ? 'right' : 'left') as 'right' | 'left' }));
  const lines = [
    '# Coding agents\' recorded sessions: strata vs llama-server', '',
    `${c.startedAt.toISOString()} · \`${c.command}\``, '',
    `Model ${c.model.split('/').pop()}, ${c.threads} threads, ${c.slots} slots of ${c.ctx} tokens, answers of at most ${c.maxTokens} tokens, ${c.runs} run(s) each, alternating; `
      + `${c.turns}-turn sessions; ${cpus().length} × ${cpus()[0]?.model ?? ''}; load average during the runs ${fmt(Math.min(...c.loads))}–${fmt(Math.max(...c.loads))}, at the end ${loadavg().map((x) => x.toFixed(2)).join(' / ')}. `
      + 'TTFTs: best run; tokens: median run; the second session\'s first request after both servers restarted (Strata with its prefix cache folder).', '',
    markdownTable(cols, rows), '',
    `Session prompts (Strata, first run): ${prompts}.`,
  ];
  if (failures.length > 0) lines.push('', 'Failures (first few):', '', ...failures.slice(0, 12).map((f) => `- ${f}`));
  return `${lines.join('\n')}\n`;
}
