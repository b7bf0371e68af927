// Whether two paths name one file, as the platform reads paths: on Windows without case and
// whatever the separators ("C:\Models\a.gguf" is "c:/models/a.gguf"; VS Code's fsPath writes the
// drive letter in lower case, a real path in upper case); elsewhere the strings themselves.
import { win32 } from 'node:path';

export function samePath(a: string, b: string, platform: NodeJS.Platform = process.platform): boolean {
  if (platform !== 'win32') return a === b;
  return a === b || win32.relative(a, b) === '';
}

/**
 * A leading "~" as the user's home folder: "~", "~/models/a.gguf", and on Windows "~\models\a.gguf"
 * too (the home folder there is %USERPROFILE%, which os.homedir() reads; $HOME is rarely set).
 */
export function expandHome(p: string, home: string, platform: NodeJS.Platform = process.platform): string {
  if (p === '~' || p.startsWith('~/') || (platform === 'win32' && p.startsWith('~\\'))) return home + p.slice(1);
  return p;
}
