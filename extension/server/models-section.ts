// The managed server's per-model settings (server-settings.ts modelsSection: contexts, the chat
// model's projector) go to it as a --config file whose "models" section gives the chat model its
// own context, slots and mmproj; written to the extension's storage at each start.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { modelsSection, type ServerSettings } from '../config/server-settings.js';

/** Writes the section when the plan has one; returns the file's path, else undefined. */
export function writeModelsSection(s: ServerSettings, storageDir: string): string | undefined {
  const section = modelsSection(s);
  if (!section) return undefined;
  mkdirSync(storageDir, { recursive: true });
  const file = join(storageDir, 'serve-models.json');
  writeFileSync(file, `${JSON.stringify(section, null, 2)}\n`);
  return file;
}
