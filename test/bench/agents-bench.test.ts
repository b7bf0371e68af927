// `npm run bench:agents` end to end on the tiny test model, one run: both servers start (llama-server
// built from the pinned source on first use), every client's recorded session is replayed on each,
// and the table has every figure's row for every client, Strata's first requests accepted.
// `npm run bench:check`; not part of `npm test`.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { AGENT_FIGURES, main } from '../../tools/bench-compare/agents-main.js';
import { AGENT_CLIENTS } from '../../tools/bench-compare/agents-replay.js';

const root = join(import.meta.dirname, '..', '..');
const out = mkdtempSync(join(tmpdir(), 'strata-bench-agents-it-'));
afterAll(() => rmSync(out, { recursive: true, force: true }));

it('runs every client\'s session on both servers and reports every row', async () => {
  expect(await main(['--runs', '1', '--turns', '3', '--threads', '2', '--out', out], root)).toBe(0);
  const table = readFileSync(join(out, 'agents-latest.md'), 'utf8');
  const rows = table.split('\n').filter((l) => l.startsWith('| ') && !l.startsWith('| client'));
  for (const client of AGENT_CLIENTS) {
    for (const figure of AGENT_FIGURES) {
      const row = rows.find((l) => l.startsWith(`| ${client} | ${figure} |`));
      expect(row, `${client}: ${figure}\n${table}`).toBeDefined();
      if (figure === 'first request accepted') expect(row!.split(' | ')[2], `${client}\n${table}`).toBe('200');
    }
  }
  expect(table).not.toContain('Failures');
}, 1_800_000);
