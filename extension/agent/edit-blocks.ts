// Search/replace blocks of edit_file: each block's search text must occur exactly once in the
// file (after the blocks before it are applied). A block that does not match exactly, or matches
// more than one place, fails the whole edit with an error naming the block: never a fuzzy match,
// so the model sees what it got wrong and nothing half-applied reaches the file.

export interface EditBlock { search: string; replace: string }

export type BlocksResult = { ok: true; text: string } | { ok: false; error: string };

function preview(s: string): string {
  const line = s.split('\n').find((l) => l.trim()) ?? s;
  const t = line.trim();
  return JSON.stringify(t.length > 60 ? `${t.slice(0, 60)}…` : t);
}

function count(hay: string, needle: string): number {
  let n = 0;
  for (let i = hay.indexOf(needle); i >= 0; i = hay.indexOf(needle, i + 1)) n++;
  return n;
}

export function applyBlocks(text: string, blocks: readonly EditBlock[]): BlocksResult {
  if (!blocks.length) return { ok: false, error: 'edits: give at least one {search, replace} block' };
  let out = text;
  for (let i = 0; i < blocks.length; i++) {
    const b = blocks[i]!;
    const name = `block ${i + 1} of ${blocks.length} (search ${preview(b.search)})`;
    if (b.search === '') return { ok: false, error: `${name}: the search text is empty; to write a new file use create_file` };
    const n = count(out, b.search);
    if (n === 0) {
      const hint = out.replace(/\r\n/g, '\n').includes(b.search.replace(/\r\n/g, '\n'))
        ? ' (it differs in line endings)'
        : ' (copy the lines exactly as read_file shows them, whitespace included, without line numbers)';
      return { ok: false, error: `${name} does not match the file exactly${hint}; nothing was changed` };
    }
    if (n > 1) return { ok: false, error: `${name} matches ${n} places; add lines around it so that it matches one; nothing was changed` };
    const at = out.indexOf(b.search);
    out = out.slice(0, at) + b.replace + out.slice(at + b.search.length);
  }
  return { ok: true, text: out };
}
