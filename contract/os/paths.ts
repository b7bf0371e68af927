// Whether two paths name one file, as the platform reads paths: on Windows without case and
// whatever the separators ("C:\Models\a.gguf" is "c:/models/a.gguf"; VS Code's fsPath writes the
// drive letter in lower case, a real path in upper case); elsewhere the strings themselves.
import { win32 } from 'node:path';

export function samePath(a: string, b: string, platform: NodeJS.Platform = process.platform): boolean {
  if (platform !== 'win32') return a === b;
  return a === b || win32.relative(a, b) === '';
}
