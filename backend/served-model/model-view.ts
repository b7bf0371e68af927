// What the HTTP layer needs to know about the served model, built once from the first
// engine that loads it: names, the chat template, special-token texts, the BOS a prompt
// must start with, and the identity that saved sessions are checked against.
import { basename } from 'node:path';
import type { ModelInfo } from '../../native/lib/addon.js';
import { ClientTextGuard } from '../chat/client-text.js';
import { RawPromptCache } from '../chat/raw-prompt-cache.js';
import { createChatTemplate, type ChatTemplate } from '../chat/template.js';
import type { ToolCallFormat } from '../chat/chat-types.js';
import { TOOL_MARKER_TEXTS } from '../chat/tool-calls.js';
import type { EngineClient } from '../engine/client.js';
import { modelIdentity } from '../models/identity.js';
import type { SessionModel } from '../../contract/sessions.js';

export interface ModelView {
  /** The id /v1/models lists (general.name, else the file name). */
  readonly id: string;
  readonly path: string;
  readonly info: ModelInfo;
  readonly demo: boolean;
  readonly template: ChatTemplate;
  /** Finds the vocabulary's control-token texts in client text (chat/client-text.ts). */
  readonly clientText: ClientTextGuard;
  readonly bosText: string;
  readonly eosText: string;
  /** [bos] when the vocabulary adds BOS to a prompt, else []. */
  readonly bosPrefix: number[];
  /**
   * Ids of the template tool format's markers that are one token each (e.g. <|python_tag|>):
   * chat requests with tools ask the engine to render them, as they are often control tokens
   * whose text would otherwise never reach the tool-call parser.
   */
  readonly toolMarkerTokens: number[];
  /** The tokens of recent raw prompts, by exact text (chat/raw-prompt-cache.ts). */
  readonly rawPrompts: RawPromptCache;
  /** The tokens of recent chat prompts' shared starts, by their rendered segments (http/chat-turn/shared-start.ts). */
  readonly sharedStarts: RawPromptCache;
  readonly session: SessionModel;
  readonly created: number;
}

/**
 * The ids of `format`'s markers that the vocabulary has as exactly one token (tokenized with
 * special-token parsing); a marker spelled with several tokens is plain text already.
 */
export async function toolMarkerTokenIds(
  format: ToolCallFormat, tokenize: (text: string) => Promise<number[]>,
): Promise<number[]> {
  const ids: number[] = [];
  for (const marker of TOOL_MARKER_TEXTS[format]) {
    const toks = await tokenize(marker);
    if (toks.length === 1 && !ids.includes(toks[0]!)) ids.push(toks[0]!);
  }
  return ids;
}

/**
 * Sessions hold KV state: only the same weights and vocabulary (the file's content identity)
 * with the same KV layout (cache type, flash attention) can load one.
 */
export function sessionIdentity(fileIdentity: string, info: ModelInfo): string {
  return `${fileIdentity};kv=${info.kvType};fa=${info.flashAttn ? 1 : 0}`;
}

/** `servedName`: the name requests route by when several models are served (it is then the id answers carry). */
export async function createModelView(path: string, client: EngineClient, demo: boolean, servedName: string | null = null): Promise<ModelView> {
  const info = client.info;
  if (!info) throw new Error('the engine has not loaded the model');
  const text = async (id: number): Promise<string> => (id >= 0 ? client.detokenize([id]).catch(() => '') : '');
  const bosText = await text(info.bos);
  const eosText = await text(info.eot >= 0 ? info.eot : info.eos);
  const bosPrefix = await client.tokenize('', true, false);
  const template = createChatTemplate({ chatTemplate: info.chatTemplate, bosText, eosText });
  const toolMarkerTokens = await toolMarkerTokenIds(template.toolFormat, (t) => client.tokenize(t, false, true));
  const id = servedName ?? (info.metadata['general.name']?.trim() || basename(path).replace(/\.gguf$/i, ''));
  const fileIdentity = await modelIdentity(path);
  const clientText = new ClientTextGuard(info.controlTexts);
  return {
    id, path, info, demo, template, clientText, bosText, eosText, bosPrefix, toolMarkerTokens,
    rawPrompts: new RawPromptCache(),
    sharedStarts: new RawPromptCache(),
    session: { identity: sessionIdentity(fileIdentity, info), name: id, file: basename(path) },
    created: Math.floor(Date.now() / 1000),
  };
}
