// `strata bench`: scenario benchmarks against any OpenAI-compatible server (ours, llama-server,
// others). Progress on stderr, a table on stdout, every figure with its conditions in --json.
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { dirname, resolve } from 'node:path';
import { optInt, optList, optString, UsageError, type ParsedArgs } from '../args/args.js';
import { settingsFromArgs, settingsOptionNames, settingsUsage } from '../bench/options.js';
import { rejectUnknownOptions, runCommand } from '../args/command-usage.js';
import { buildReport, notesOf, summaryTable } from '../bench/report.js';
import { parseScenarios, prepare, runOnce, summarize } from '../bench/runner.js';
import type { RunRecord } from '../../contract/bench.js';
import { scenarios } from '../bench/scenarios/index.js';
import { invalidUtf8TokensOf } from '../bench/utf8-tokens.js';

const usage = `usage: strata bench --url URL [options]

  --url URL             server base URL (OpenAI-compatible), e.g. http://127.0.0.1:8080
  --api-key K           bearer token (also STRATA_API_KEY, which keeps it off the command line)
  --model NAME          model name to send (default: the first of /v1/models)
  --scenarios A,B       ${Object.keys(scenarios).join(',')} (default: all)
  --runs N              runs of each scenario (default 3)
  --json FILE           write every figure with its conditions
  --label NAME          a name for this result (kept in the JSON)
  --slots N             slot count when the server does not report it
  --ctx N               context per slot when the server does not report it
  --ban-invalid-utf8 F  the model's GGUF: every request bans the tokens that are not valid UTF-8
                        alone (llama-server ends such answers with HTTP 500; bench:compare does
                        this for both servers)

Figures come from completed requests only; each scenario's row says how many of its requests
failed and how many output tokens were delivered (failed ones' included).

scenarios:
${Object.values(scenarios).map((s) => `  ${s.name.padEnd(13)} ${s.summary}`).join('\n')}

${settingsUsage}
`;

const OPTIONS = ['url', 'api-key', 'model', 'scenarios', 'runs', 'json', 'label', 'slots', 'ctx', 'ban-invalid-utf8', 'help', ...settingsOptionNames];

export const command = {
  summary: 'benchmark scenarios against an OpenAI-compatible server (TTFT, tok/s, p50/p95)',
  run: (args: ParsedArgs): Promise<number> => runCommand('bench', usage, args, () => bench(args)),
};

async function bench(args: ParsedArgs): Promise<number> {
  rejectUnknownOptions(args, OPTIONS);
  const url = optString(args, 'url');
  if (!url || url === 'true') throw new UsageError('--url is required');
  if (!/^https?:\/\/[^/]+/.test(url)) throw new UsageError(`--url must be an http(s) URL, got '${url}'`);
  const names = (() => { try { return parseScenarios(optList(args, 'scenarios')); } catch (e) { throw new UsageError((e as Error).message); } })();
  const runs = optInt(args, 'runs', 1, 1000) ?? 3;
  const settings = settingsFromArgs(args);
  const jsonPath = optString(args, 'json');
  const label = optString(args, 'label') ?? null;
  const slots = optInt(args, 'slots', 1, 1024);
  const ctxOpt = optInt(args, 'ctx', 64, 1 << 24);
  const apiKey = optString(args, 'api-key') ?? (process.env.STRATA_API_KEY || undefined);
  const model = optString(args, 'model');
  const log = (m: string) => process.stderr.write(`[bench] ${m}\n`);
  const vocabFile = optString(args, 'ban-invalid-utf8');
  let bannedTokens: number[] | null = null;
  if (vocabFile !== undefined) {
    if (vocabFile === 'true') throw new UsageError('--ban-invalid-utf8 needs the model\'s GGUF file');
    bannedTokens = await invalidUtf8TokensOf(vocabFile).catch((e: Error) => { throw new UsageError(`--ban-invalid-utf8: ${e.message}`); });
    log(bannedTokens === null ? `${vocabFile}: tokenizer not known, nothing banned` : `banning ${bannedTokens.length} tokens that are not valid UTF-8 alone`);
  }

  const startedAt = new Date();
  const ctx = await prepare({
    url, settings, salt: randomBytes(6).toString('hex'), progress: (m) => log(`  ${m}`), bannedTokens,
    ...(apiKey ? { apiKey } : {}), ...(model ? { model } : {}), ...(slots ? { slots } : {}), ...(ctxOpt ? { ctx: ctxOpt } : {}),
  });
  const info = ctx.info;
  log(`${ctx.target.url}: model ${info.model}, slots ${info.slots ?? 'unknown'} (${info.slotsSource}), ` +
    `context per slot ${info.ctxPerSlot ?? 'unknown'} (${info.ctxSource}), ignore_eos ${info.ignoreEos ? 'yes' : 'no'}, ` +
    `token counts ${ctx.sizer.exact ? `exact (${info.tokenizePath})` : 'estimated'}`);

  const records: RunRecord[] = [];
  for (let run = 0; run < runs; run++) {
    for (const name of names) {
      log(`run ${run + 1}/${runs}: ${name}`);
      const rec = await runOnce(ctx, name, run);
      log(`run ${run + 1}/${runs}: ${name} ${rec.error ? `FAILED: ${rec.error}` : 'done'} (${(rec.durationMs / 1000).toFixed(1)} s)`);
      records.push(rec);
    }
  }
  const summary = summarize(records);
  process.stdout.write(`${summaryTable(summary, records)}\n`);
  const notes = notesOf(records);
  if (notes.length > 0) process.stdout.write(`\nnotes:\n${notes.map((n) => `  - ${n}`).join('\n')}\n`);
  if (jsonPath) {
    const report = buildReport({
      label, startedAt, url: ctx.target.url, info, sizer: ctx.sizer, runs, names, settings, summary, records,
      bannedTokens: bannedTokens?.length ?? 0,
      cpus: availableParallelism(),
    });
    const file = resolve(jsonPath);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
    log(`wrote ${file}`);
  }
  return records.some((r) => r.error) ? 1 : 0;
}
