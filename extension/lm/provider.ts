// The Strata models in VS Code's chat model picker (vscode.lm, vendor "strata").
import * as vscode from 'vscode';
import type { ModelEntry } from '../client/types.js';
import type { ServerConnection } from '../server/connection.js';
import { messageText, parseToolInput, toChatMessages } from './convert.js';

const FALLBACK_CONTEXT = 8192;

export function registerChatModelProvider(context: vscode.ExtensionContext, server: ServerConnection): void {
  const changed = new vscode.EventEmitter<void>();
  let lastState = server.status.state;
  context.subscriptions.push(changed, server.onDidChange((s) => {
    // The model list follows the server: empty while stopped, the loaded model when ready.
    if ((s.state === 'ready') !== (lastState === 'ready')) changed.fire();
    lastState = s.state;
  }));

  const provider: vscode.LanguageModelChatProvider = {
    onDidChangeLanguageModelChatInformation: changed.event,

    async provideLanguageModelChatInformation(_options, token) {
      const client = server.client;
      if (!client) return [];
      const ac = abortOn(token);
      let models: ModelEntry[];
      try { models = await client.models(ac.signal); } catch { return []; }
      return models.map((m) => {
        const ctx = m.contextLength ?? FALLBACK_CONTEXT;
        const maxOut = m.maxOutputTokens ?? Math.min(4096, Math.floor(ctx / 2));
        return {
          id: m.id,
          name: `${shortName(m.id)} (Strata)`,
          family: shortName(m.id),
          version: '1',
          detail: 'local',
          tooltip: `Served by Strata at ${client.baseUrl}`,
          maxInputTokens: Math.max(1, ctx - maxOut),
          maxOutputTokens: maxOut,
          capabilities: { toolCalling: m.toolCalling, imageInput: false },
        };
      });
    },

    async provideLanguageModelChatResponse(model, messages, options, progress, token) {
      const client = await server.ensureReady();
      const ac = abortOn(token);
      const opts = options.modelOptions ?? {};
      const tools = (options.tools ?? []).map((t) => ({ name: t.name, description: t.description, parameters: t.inputSchema }));
      const stream = client.chatStream({
        model: model.id,
        messages: toChatMessages(messages),
        // We advertise maxOutputTokens, so a caller that names no limit gets that one.
        maxTokens: typeof opts.max_tokens === 'number' ? opts.max_tokens : model.maxOutputTokens,
        temperature: typeof opts.temperature === 'number' ? opts.temperature : undefined,
        tools,
        toolChoice: tools.length ? (options.toolMode === vscode.LanguageModelChatToolMode.Required ? 'required' : 'auto') : undefined,
      }, ac.signal);
      try {
        for await (const ev of stream) {
          if (token.isCancellationRequested) break;
          if (ev.type === 'text') progress.report(new vscode.LanguageModelTextPart(ev.text));
          else if (ev.type === 'toolCall') progress.report(new vscode.LanguageModelToolCallPart(ev.call.id, ev.call.name, parseToolInput(ev.call.arguments)));
        }
      } catch (err) {
        if (token.isCancellationRequested) return;
        throw new Error(`Strata: ${(err as Error).message}`);
      }
    },

    async provideTokenCount(_model, text, token) {
      const s = messageText(text as never);
      const client = server.client;
      if (!client || !s) return Math.ceil(s.length / 4);
      try {
        return (await client.tokenize(s, abortOn(token).signal)).length;
      } catch {
        return Math.ceil(s.length / 4); // a rough count beats failing the caller's request
      }
    },
  };
  context.subscriptions.push(vscode.lm.registerLanguageModelChatProvider('strata', provider));
}

function shortName(id: string): string {
  return id.split(/[\\/]/).pop()!.replace(/\.gguf$/i, '');
}

/** An AbortController that aborts when the VS Code token is cancelled. */
export function abortOn(token: vscode.CancellationToken): AbortController {
  const ac = new AbortController();
  if (token.isCancellationRequested) ac.abort();
  else token.onCancellationRequested(() => ac.abort());
  return ac;
}
