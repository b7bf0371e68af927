// POST /v1/chat/completions: messages -> the model's chat template -> tokens -> a queued
// generation; the output first goes through the reasoning splitter (a `<think>` block leaves as
// reasoning_content, unless reasoning_format is 'none'), then the answer through the streaming
// tool-call parser, so tool calls leave as OpenAI tool_call deltas and anything that is not a
// valid call leaves as content (what the model writes never causes a 5xx).
import { parseChatRequest } from '../../api/schemas.js';
import { renderChatPrompt } from '../../chat/chat-prompt.js';
import { reasoningSplitterFor, type SplitDelta } from '../../chat/reasoning.js';
import { ToolCallStreamParser } from '../../chat/tool-calls.js';
import type { AppContext } from '../app-context.js';
import {
  checkContext, figuresOf, follow, maxTokensFor, requireModel, settle, tokenizeChat, withRequest, type PromptProgress,
} from '../generation.js';
import { ChatChunkBuilder, chatCompletion, chatFinish, type ChatDelta } from '../openai-shapes.js';
import { readJson, sendJson } from '../respond.js';
import type { RouteContext } from '../router.js';

export async function chatCompletions(app: AppContext, { req, res }: RouteContext): Promise<void> {
  const body = parseChatRequest(await readJson(req, app.config.bodyLimitMib * 1024 * 1024));
  const model = requireModel(app);
  const toolsOn = body.tools.length > 0 && body.toolChoice !== 'none';
  const rendered = renderChatPrompt(model, body.messages, {
    ...(toolsOn ? { tools: body.tools } : {}),
    addGenerationPrompt: true,
    ...(Object.keys(body.templateKwargs).length ? { extraContext: body.templateKwargs } : {}),
  });

  await withRequest(app, 'chat', body.stream, res, async (run) => {
    const prompt = await tokenizeChat(app, rendered);
    checkContext(prompt, model, 'messages');
    const id = `chatcmpl-${run.rec.id}`;
    const created = Math.floor(Date.now() / 1000);
    const chunks = new ChatChunkBuilder(id, model.id, created, app.fingerprint);
    const parser = new ToolCallStreamParser(model.template.toolFormat, { toolsEnabled: toolsOn });
    const splitter = reasoningSplitterFor(body.reasoningFormat, rendered.text);
    // Reasoning never reaches the tool-call parser (a call the model only considered is no call).
    const route = (pieces: readonly SplitDelta[]): ChatDelta[] =>
      pieces.flatMap((p): ChatDelta[] => (p.type === 'reasoning' ? [p] : parser.push(p.text)));
    let content = '';
    let reasoning = '';
    const collect = (deltas: readonly ChatDelta[]): void => {
      for (const d of deltas) {
        if (d.type === 'content') content += d.text;
        else if (d.type === 'reasoning') reasoning += d.text;
      }
    };
    const sse = run.sse;
    // The role chunk opens the stream with its first real event, so a request that fails before
    // its first token still gets a status code (see withRequest).
    let opened = false;
    const emit = (chunk: unknown): void => {
      if (!sse) return;
      if (!opened) { opened = true; sse.event(chunks.role()); }
      sse.event(chunk);
    };

    const done = await follow(run, {
      prompt, maxTokens: maxTokensFor(body.maxTokens, prompt.length, model), sampling: body.sampling,
      stop: body.stop, ignoreEos: body.ignoreEos,
      // Tool-call markers that are control tokens render only when asked for.
      ...(toolsOn && model.toolMarkerTokens.length > 0 ? { renderTokens: model.toolMarkerTokens } : {}),
    }, {
      onText(piece) {
        const deltas = splitter ? route(splitter.push(piece)) : parser.push(piece);
        if (sse) { for (const c of chunks.deltas(deltas)) emit(c); return; }
        collect(deltas);
      },
      ...(sse && body.returnProgress ? {
        onProgress: (p: PromptProgress) => emit({ ...chunks.empty(), prompt_progress: p }),
      } : {}),
    });

    if (!settle(run, done)) return;
    const tail = [...(splitter ? route(splitter.end()) : []), ...parser.end()];
    const finish = chatFinish(done.finish, parser.calls);
    if (parser.calls.length > 0) run.request.outcome('tool_calls');
    const figures = figuresOf(run.rec, done);
    if (sse) {
      for (const c of chunks.deltas(tail)) emit(c);
      emit(chunks.final(finish, figures));
      if (body.includeUsage) emit(chunks.usageOnly(figures));
      sse.done();
      return;
    }
    collect(tail);
    sendJson(res, 200, chatCompletion({ id, model: model.id, created, fingerprint: app.fingerprint, content, reasoning, calls: parser.calls, finish, figures }));
  });
}
