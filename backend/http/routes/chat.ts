// POST /v1/chat/completions: messages -> the model's chat template -> tokens -> a queued
// generation; the output first goes through the reasoning splitter (a `<think>` block leaves as
// reasoning_content, unless reasoning_format is 'none'), then the answer through the streaming
// tool-call parser, so tool calls leave as OpenAI tool_call deltas and anything that is not a
// valid call leaves as content (what the model writes never causes a 5xx). With n > 1 every
// choice has its own splitter and parser; response_format and a forced tool_choice constrain the
// output with a grammar.
import { parseChatRequest } from '../../validation/schemas.js';
import type { AppContext } from '../app-context.js';
import { grammarFor, outputSpec } from '../constraint.js';
import { ChoiceText, renderConversation, toolCallsAsked } from '../chat-choice.js';
import {
  checkContext, figuresOf, follow, maxTokensFor, requireModel, settle, tokenizeChatImages, withRequest, type PromptProgress,
} from '../generation.js';
import { chatLogprobs } from '../logprob-shapes.js';
import { predictionSpec } from '../prediction.js';
import { budgetOf, withThinkingBudget } from '../thinking-budget.js';
import { checkChoices, requireTextModel } from '../model-checks.js';
import { ChatChunkBuilder, chatCompletionChoices, chatFinish } from '../openai-shapes.js';
import { readJson, sendJson } from '../respond.js';
import type { RouteContext } from '../router.js';

export async function chatCompletions(app: AppContext, { req, res }: RouteContext): Promise<void> {
  const body = parseChatRequest(await readJson(req, app.bodies));
  const model = requireModel(app);
  requireTextModel(model);
  checkChoices(body.n, model);
  const { toolsOn, rendered } = renderConversation(model, body, app.config.reasoning);
  const style = model.template.callStyle;

  await withRequest(app, 'chat', body.stream, res, async (run) => {
    const { prompt, images } = await tokenizeChatImages(app, model, rendered);
    checkContext(prompt, model, 'messages');
    const predicted = await predictionSpec(app, body.prediction);
    const grammar = await grammarFor(app, {
      constraint: body.constraint,
      // response_format constrains the whole answer; tool calls then have no room (a forced one is refused).
      tools: body.constraint ? null : toolCallsAsked(body, style, body.reasoningFormat, rendered.text),
    });
    if (grammar.warnings.length > 0) app.log.warn('tool schemas not enforced by the grammar', { request: run.rec.id, warnings: grammar.warnings.join(' | ') });
    const sampling = await withThinkingBudget(app, body.sampling, rendered, budgetOf(app, { effort: body.reasoningEffort }));
    const id = `chatcmpl-${run.rec.id}`;
    const created = Math.floor(Date.now() / 1000);
    const chunks = new ChatChunkBuilder(id, model.id, created, app.fingerprint);
    const choices = Array.from({ length: body.n }, () => new ChoiceText(style, toolsOn, body.reasoningFormat, rendered.text));
    const top = body.logprobs;
    const sse = run.sse;
    // The role chunks (one per choice) open the stream with its first real event, so a request
    // that fails before its first token still gets a status code (see withRequest).
    let opened = false;
    const send = (chunk: unknown): void => {
      if (!sse) return;
      if (!opened) { opened = true; for (let i = 0; i < choices.length; i++) sse.event(chunks.role(i)); }
      sse.event(chunk);
    };
    const emit = (i: number, piece: string, lps?: Parameters<typeof chatLogprobs>[0], tokens = 0): void => {
      const c = choices[i]!;
      const deltas = piece || tokens ? c.push(piece, tokens) : [];
      const logprobs = lps && top !== null ? chatLogprobs(lps, top) : null;
      if (sse) { for (const chunk of chunks.deltas(deltas, i, logprobs)) send(chunk); return; }
      c.collect(deltas);
      if (logprobs) c.logprobs.push(...logprobs);
    };

    const done = await follow(run, {
      prompt, maxTokens: maxTokensFor(body.maxTokens, prompt.length, model), sampling,
      ...(images.length > 0 ? { images } : {}),
      stop: body.stop, ignoreEos: body.ignoreEos,
      // Tool-call markers that are control tokens render only when asked for.
      ...(toolsOn && model.toolMarkerTokens.length > 0 ? { renderTokens: model.toolMarkerTokens } : {}),
      ...outputSpec(body, grammar),
      ...predicted,
    }, {
      onText(piece) { emit(0, piece); },
      onTokens(ev) { emit(ev.choice ?? 0, ev.text, ev.logprobs, ev.ids.length); },
      ...(sse && body.returnProgress ? {
        onProgress: (p: PromptProgress) => send({ ...chunks.empty(), prompt_progress: p }),
      } : {}),
    });

    if (!settle(run, done)) return;
    // n > 1: each choice's withheld text comes with its own end.
    done.choices?.forEach((c, i) => { if (c.text) emit(i, c.text); });
    const finishes = choices.map((c, i) => chatFinish(done.choices?.[i]?.finish ?? done.finish, c.parser.calls));
    const tails = choices.map((c) => c.end());
    if (choices.some((c) => c.parser.calls.length > 0)) run.request.outcome('tool_calls');
    const figures = {
      ...figuresOf(run.rec, done, body.prediction !== null), warnings: grammar.warnings,
      reasoningTokens: choices.reduce((n, c) => n + c.reasoningTokens, 0),
    };
    if (sse) {
      tails.forEach((tail, i) => { for (const c of chunks.deltas(tail, i)) send(c); });
      const last = choices.length - 1;
      for (let i = 0; i < last; i++) send(chunks.finishOnly(finishes[i]!, i));
      send(chunks.final(finishes[last]!, figures, last));
      if (body.includeUsage) send(chunks.usageOnly(figures));
      sse.done();
      return;
    }
    choices.forEach((c, i) => c.collect(tails[i]!));
    sendJson(res, 200, chatCompletionChoices({
      id, model: model.id, created, fingerprint: app.fingerprint, figures,
      choices: choices.map((c, i) => ({
        content: c.content, reasoning: c.reasoning, calls: c.parser.calls, finish: finishes[i]!,
        ...(top !== null ? { logprobs: c.logprobs } : {}),
      })),
    }));
  });
}
