// POST /v1/messages and /v1/messages/count_tokens: Anthropic's Messages API over the same chat
// path as /v1/chat/completions (the model's template with tools, the reasoning splitter, the
// streaming tool-call parser, a grammar for a forced tool call), answered in Anthropic's shapes:
// content blocks (thinking, text, tool_use), stop_reason, usage, and the named stream events.
// Errors, streamed or not, are Anthropic error bodies.
import { errorStatus, isErrorCode } from '../../../contract/error-codes.js';
import { parseConversation, parseMessagesRequest } from '../../validation/anthropic-schema.js';
import { ApiError, toApiError, type ApiErrorBody } from '../../validation/errors.js';
import { requireObject } from '../../validation/validate.js';
import type { AppContext } from '../app-context.js';
import {
  anthropicError, anthropicUsage, BlockStream, contentBlocks, messageObject, stopReason, type AnthropicEvent,
} from '../anthropic-shapes.js';
import { ChoiceText, renderConversation, toolCallsAsked } from '../chat-choice.js';
import { grammarFor, outputSpec } from '../constraint.js';
import {
  checkContext, ClientGone, figuresOf, follow, maxTokensFor, requireModel, settle, tokenizeChatImages, withRequest,
} from '../generation.js';
import { requireTextModel } from '../model-checks.js';
import { readJson, sendJson } from '../respond.js';
import { budgetOf, withThinkingBudget } from '../thinking-budget.js';
import type { RouteContext } from '../router.js';
import type { SseStream } from '../sse.js';

/** An OpenAI-shaped error (what failRun hands the stream) as Anthropic's `error` event. */
function streamedError(body: unknown): string {
  const e = (body as ApiErrorBody)?.error;
  const status = isErrorCode(e?.code) ? errorStatus(e.code) : 500;
  return `event: error\ndata: ${JSON.stringify(anthropicError(status, e?.message ?? 'unknown error'))}\n\n`;
}

/** Runs a handler and answers its failure as an Anthropic error body. */
async function anthropicErrors(app: AppContext, ctx: RouteContext, fn: () => Promise<void>): Promise<void> {
  try {
    await fn();
  } catch (e) {
    if (e instanceof ClientGone) throw e;
    const err = toApiError(e);
    if (err.status >= 500 && !(e instanceof ApiError)) app.log.error('request failed', { path: ctx.url.pathname, error: (e as Error)?.stack ?? String(e) });
    if (ctx.res.headersSent) { ctx.res.end(); return; }
    sendJson(ctx.res, err.status, anthropicError(err.status, err.message), err.status === 503 ? { 'Retry-After': '1' } : {});
  }
}

function send(sse: SseStream, events: readonly AnthropicEvent[]): void {
  for (const ev of events) sse.named(ev.event, ev.data);
}

export function messages(app: AppContext, ctx: RouteContext): Promise<void> {
  return anthropicErrors(app, ctx, async () => {
    const body = parseMessagesRequest(await readJson(ctx.req, app.bodies));
    const model = requireModel(app);
    requireTextModel(model);
    const { toolsOn, rendered } = renderConversation(model, body, app.config.reasoning);
    const style = model.template.callStyle;

    await withRequest(app, 'chat', body.stream, ctx.res, async (run) => {
      const { prompt, images } = await tokenizeChatImages(app, model, rendered);
      checkContext(prompt, model, 'messages');
      const grammar = await grammarFor(app, { constraint: null, tools: toolCallsAsked(body, style, 'auto', rendered.text) });
      if (grammar.warnings.length > 0) app.log.warn('tool schemas not enforced by the grammar', { request: run.rec.id, warnings: grammar.warnings.join(' | ') });
      const id = `msg_${run.rec.id}`;
      const answer = new ChoiceText(style, toolsOn, 'auto', rendered.text);
      const blocks = new BlockStream();
      const sse = run.sse;
      sse?.setErrorFormat(streamedError);
      // message_start opens the stream with its first real event, so a request that fails before
      // its first token still gets a status code and an Anthropic error body (see withRequest).
      let opened = false;
      const emit = (events: readonly AnthropicEvent[]): void => {
        if (!sse || events.length === 0) return;
        if (!opened) {
          opened = true;
          sse.named('message_start', {
            type: 'message_start',
            message: messageObject({ id, model: model.id, content: [], stopReason: null, stopSequence: null, usage: anthropicUsage(prompt.length, null, 0) }),
          });
          sse.named('ping', { type: 'ping' });
        }
        send(sse, events);
      };
      const take = (piece: string): void => {
        if (!piece) return;
        const deltas = answer.push(piece);
        if (sse) emit(blocks.push(deltas));
        else answer.collect(deltas);
      };
      const done = await follow(run, {
        prompt, maxTokens: maxTokensFor(body.maxTokens, prompt.length, model), stop: body.stop,
        ...(images.length > 0 ? { images } : {}),
        sampling: await withThinkingBudget(app, body.sampling, rendered, budgetOf(app, { budget: body.thinkingBudget })),
        ...(toolsOn && model.toolMarkerTokens.length > 0 ? { renderTokens: model.toolMarkerTokens } : {}),
        ...outputSpec({ logprobs: null, n: 1, draftMax: null }, grammar),
      }, {
        onText(piece) { take(piece); },
        onTokens(ev) { take(ev.text); },
      });
      if (!settle(run, done)) return;
      const tail = answer.end();
      const calls = answer.parser.calls;
      if (calls.length > 0) run.request.outcome('tool_calls');
      const reason = stopReason(done.finish, calls, done.stopString);
      const figures = figuresOf(run.rec, done);
      const usage = anthropicUsage(figures.promptTokens, figures.reused, figures.generated);
      if (sse) {
        emit([
          ...blocks.push(tail), ...blocks.end(),
          { event: 'message_delta', data: { type: 'message_delta', delta: { stop_reason: reason, stop_sequence: done.stopString ?? null }, usage: { output_tokens: usage.output_tokens } } },
          { event: 'message_stop', data: { type: 'message_stop' } },
        ]);
        sse.close();
        return;
      }
      answer.collect(tail);
      sendJson(ctx.res, 200, messageObject({
        id, model: model.id, content: contentBlocks(answer.reasoning, answer.content, calls),
        stopReason: reason, stopSequence: done.stopString ?? null, usage,
      }));
    });
  });
}

export function countTokens(app: AppContext, ctx: RouteContext): Promise<void> {
  return anthropicErrors(app, ctx, async () => {
    const body = parseConversation(requireObject(await readJson(ctx.req, app.bodies), ''));
    const model = requireModel(app);
    requireTextModel(model);
    const { prompt } = await tokenizeChatImages(app, model, renderConversation(model, body, app.config.reasoning).rendered);
    sendJson(ctx.res, 200, { input_tokens: prompt.length });
  });
}
