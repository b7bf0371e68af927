// The .gguf files under a folder, its subfolders included (the layout `strata pull` writes:
// ORG/REPO/FILE.gguf). A link to a file counts as the file; a link to a folder is not followed.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

export function ggufFilesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    const isFile = entry.isFile() || (entry.isSymbolicLink() && statSync(path, { throwIfNoEntry: false })?.isFile() === true);
    if (entry.isDirectory()) out.push(...ggufFilesUnder(path));
    else if (isFile && /\.gguf$/i.test(entry.name)) out.push(path);
  }
  return out.sort();
}
