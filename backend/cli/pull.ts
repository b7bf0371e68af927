// `strata pull ORG/REPO[:QUANT]` or `strata pull ORG/REPO/FILE.gguf`: a GGUF model from the
// Hugging Face Hub into the models folder, as llama.cpp's -hf names it. Prints the local path on
// stdout (progress and what was picked on stderr), so `strata serve --model "$(strata pull …)"`
// works; `strata serve --model hf:ORG/REPO:QUANT` does the same by itself.
import { resolve } from 'node:path';
import { optString, UsageError, type ParsedArgs } from '../args/args.js';
import { rejectUnknownOptions, runCommand } from '../args/command-usage.js';
import { parseHubRef, type HubRef } from '../../common/hub/hub-ref.js';
import { pullProgress, type ProgressSink } from '../../common/hub/pull-progress.js';
import { pullModel } from '../../common/hub/pull.js';
import { defaultModelsDir } from '../../common/hub/cache-dir.js';

const USAGE = `usage: strata pull ORG/REPO[:QUANT] | ORG/REPO/FILE.gguf [--dir DIR]
  ORG/REPO:QUANT      the repository's GGUF of that quantisation (case-insensitive: Q4_K_M, q8_0, ...);
                      without :QUANT, Q4_K_M when there is one, else the smallest model
  ORG/REPO/FILE.gguf  that file (a split model's first part brings all its parts)
  --dir DIR           the models folder (default ${defaultModelsDir()}); files go to DIR/ORG/REPO/
A model already there is used without asking the Hub. A download broken off resumes where it
stopped (run it again), and is checked against the sha256 the Hub publishes.
Environment: HF_TOKEN (gated or private models), MODEL_ENDPOINT or HF_ENDPOINT (another Hub).`;

export interface PullArgs { ref: HubRef; dir: string }

export function parsePullArgs(args: ParsedArgs): PullArgs {
  rejectUnknownOptions({ options: args.options, positional: [] }, ['dir', 'help']);
  const [refText, ...extra] = args.positional;
  if (refText === undefined) throw new UsageError('name a model: ORG/REPO[:QUANT] or ORG/REPO/FILE.gguf');
  if (extra.length > 0) throw new UsageError(`unexpected argument '${extra[0]}'`);
  let ref: HubRef;
  try { ref = parseHubRef(refText); } catch (e) { throw new UsageError((e as Error).message); }
  const dir = optString(args, 'dir');
  if (dir === 'true' || dir === '') throw new UsageError('--dir needs a folder');
  return { ref, dir: resolve(dir ?? defaultModelsDir()) };
}

/** Progress on stderr: a line rewritten in place on a terminal, a line per tenth otherwise. */
export function stderrProgressSink(): ProgressSink {
  const err = process.stderr;
  if (!err.isTTY) return { line: (t) => { err.write(`${t}\n`); } };
  return { line: (t) => { err.write(`\r\x1b[K${t}\n`); }, overwrite: (t) => { err.write(`\r\x1b[K${t}`); } };
}

export const command = {
  summary: 'download a GGUF model from the Hugging Face Hub (ORG/REPO[:QUANT])',
  run: (args: ParsedArgs): Promise<number> => runCommand('pull', USAGE, args, async () => {
    const o = parsePullArgs(args);
    const ac = new AbortController();
    const stop = (): void => ac.abort();
    process.once('SIGINT', stop);
    try {
      const r = await pullModel({ ref: o.ref, dir: o.dir, signal: ac.signal, onEvent: pullProgress(stderrProgressSink()) });
      if (r.alreadyPresent) process.stderr.write(`already pulled: ${r.files.length > 1 ? `${r.files.length} parts, ` : ''}nothing downloaded\n`);
      process.stdout.write(`${r.path}\n`);
      return 0;
    } finally {
      process.off('SIGINT', stop);
    }
  }),
};
