// `strata models`: the GGUF models in the models folder (what `strata pull` brought, or any folder
// given), each with its size, file type, architecture, training context and the roles it can
// serve, read from its header without loading it.
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { optString, UsageError, type ParsedArgs } from '../args/args.js';
import { optFlag, rejectUnknownOptions, runCommand } from '../args/command-usage.js';
import { formatSize } from '../../common/hub/pick.js';
import { defaultModelsDir } from '../../common/hub/cache-dir.js';
import { listLocalModels, type LocalModel } from '../models/local-models.js';

const USAGE = `usage: strata models [--dir DIR] [--json]
  --dir    the folder to list, subfolders included (default ${defaultModelsDir()}, where strata pull puts models)
  --json   print the list as JSON
Roles, from each file's metadata: completion (FIM tokens), chat (a chat template; "tools" names the
tool-call format it teaches), embedding (a pooling type or an encoder), rerank (pooling "rank").`;

export function formatModels(models: readonly LocalModel[]): string {
  const rows = [['file', 'size', 'type', 'arch', 'context', 'roles'], ...models.map((m) => [
    m.parts > 1 ? `${m.file} (${m.parts} parts)` : m.file,
    formatSize(m.bytes),
    m.fileType ?? '-',
    m.architecture ?? '-',
    m.contextLength === null ? '-' : String(m.contextLength),
    m.error !== null ? `unreadable: ${m.error}`
      : `${m.roles.join(', ') || '-'}${m.toolFormat !== null && m.toolFormat !== 'none' ? ` (tools: ${m.toolFormat})` : ''}`,
  ])];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  ')).join('\n');
}

export const command = {
  summary: 'list the GGUF models in the models folder with their roles',
  run: (args: ParsedArgs): Promise<number> => runCommand('models', USAGE, args, async () => {
    rejectUnknownOptions(args, ['dir', 'json', 'help']);
    const given = optString(args, 'dir');
    if (given === 'true' || given === '') throw new UsageError('--dir needs a folder');
    const dir = resolve(given ?? defaultModelsDir());
    const json = optFlag(args, 'json');
    const models = existsSync(dir) ? await listLocalModels(dir) : [];
    if (json) {
      process.stdout.write(`${JSON.stringify({ dir, models }, null, 2)}\n`);
    } else if (models.length === 0) {
      process.stdout.write(`no GGUF models in ${dir}${given === undefined ? ' (strata pull ORG/REPO:QUANT brings one)' : ''}\n`);
    } else {
      process.stdout.write(`${dir}\n${formatModels(models)}\n`);
    }
    return 0;
  }),
};
