// A change as the conversation shows it: a unified diff of the file (3 lines of context).
import { structuredPatch } from 'diff';

export function unifiedDiff(path: string, before: string | null, after: string): string {
  const p = structuredPatch(before === null ? '/dev/null' : `a/${path}`, `b/${path}`, before ?? '', after, '', '', { context: 3 });
  const out = [`--- ${before === null ? '/dev/null' : `a/${path}`}`, `+++ b/${path}`];
  for (const h of p.hunks) {
    out.push(`@@ -${h.oldStart},${h.oldLines} +${h.newStart},${h.newLines} @@`, ...h.lines);
  }
  return out.join('\n');
}
