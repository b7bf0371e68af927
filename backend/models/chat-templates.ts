// Chat templates for generated models: the real templates llama.cpp keeps for its own tests
// (models/templates/<name>.jinja in the pinned source), by name or by path, so a random-weight
// model can speak a family's format (tool-call tests, the tool-call benchmark).
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { llamaSourceDirs, VocabNotFoundError } from './vocab.js';

export class ChatTemplateNotFoundError extends VocabNotFoundError {}

export interface ChatTemplateFile {
  /** What a cache key may hold: the file's name without `.jinja`. */
  name: string;
  text: string;
}

/** Names of the templates the pinned source has, sorted. */
export function listChatTemplates(): string[] {
  const names = new Set<string>();
  for (const dir of llamaSourceDirs(join('models', 'templates'))) {
    for (const f of readdirSync(dir)) if (f.endsWith('.jinja')) names.add(f.slice(0, -'.jinja'.length));
  }
  return [...names].sort();
}

/** A template name ("Qwen-Qwen2.5-7B-Instruct") or a path to a .jinja file; throws ChatTemplateNotFoundError naming what is there. */
export function resolveChatTemplate(nameOrPath: string): ChatTemplateFile {
  if (nameOrPath.includes('/') || nameOrPath.endsWith('.jinja')) {
    const path = resolve(nameOrPath);
    if (!existsSync(path) || !statSync(path).isFile()) throw new ChatTemplateNotFoundError(`chat template file not found: ${path}`);
    return { name: basename(path).replace(/\.jinja$/, ''), text: readFileSync(path, 'utf8') };
  }
  for (const dir of llamaSourceDirs(join('models', 'templates'))) {
    const path = join(dir, `${nameOrPath}.jinja`);
    if (existsSync(path)) return { name: nameOrPath, text: readFileSync(path, 'utf8') };
  }
  throw new ChatTemplateNotFoundError(`unknown chat template '${nameOrPath}' (available: ${listChatTemplates().join(', ') || 'none: no llama.cpp source in the cache'})`);
}
