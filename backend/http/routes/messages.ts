// POST /v1/messages and /v1/messages/count_tokens: Anthropic's Messages API as a chat turn
// (chat-turn/), written back in Anthropic's shapes: content blocks (thinking, text, tool_use),
// stop_reason, usage, and the named stream events. Errors, streamed or not, are Anthropic error bodies.
import { errorStatus, isErrorCode } from '../../../contract/error-codes.js';
import { parseConversation, parseMessagesRequest, type MessagesRequest } from '../../validation/anthropic-schema.js';
import { ApiError, toApiError, type ApiErrorBody } from '../../validation/errors.js';
import { requireObject } from '../../validation/validate.js';
import type { AppContext } from '../app-context.js';
import {
  anthropicError, anthropicUsage, BlockStream, contentBlocks, messageObject, stopReason, type AnthropicEvent,
} from '../anthropic-shapes.js';
import { renderConversation } from '../chat-turn/choice-text.js';
import { runChatTurn } from '../chat-turn/run.js';
import { lazyStream, type ChatTurn, type TurnStart, type TurnWriter } from '../chat-turn/turn.js';
import { ClientGone, requireModel, tokenizeChatImages } from '../generation.js';
import { requireTextModel } from '../model-checks.js';
import { readJson, sendJson } from '../respond.js';
import type { RouteContext } from '../router.js';

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

export function messagesTurnOf(body: MessagesRequest): ChatTurn {
  return {
    conversation: body, conversationField: 'messages', stream: body.stream, n: 1, maxTokens: body.maxTokens,
    stop: body.stop, ignoreEos: false, sampling: body.sampling, logprobs: null, constraint: null, draftMax: null,
    prediction: null, reasoningFormat: 'auto', thinking: { budget: body.thinkingBudget, effort: body.effort }, returnProgress: false,
  };
}

function messagesWriter({ model, run, prompt, res }: TurnStart): TurnWriter {
  const id = `msg_${run.rec.id}`;
  const blocks = new BlockStream();
  const sse = run.sse;
  // message_start (and a ping) open the stream, with the first answer event: the prompt is read by
  // then, so its usage says how much of it came from the cache (clients read cache_read_input_tokens there).
  const emit = lazyStream<AnthropicEvent>(sse, () => [
    {
      event: 'message_start',
      data: { type: 'message_start', message: messageObject({ id, model: model.id, content: [], stopReason: null, stopSequence: null, usage: anthropicUsage(prompt.length, run.rec.reused, 0) }) },
    },
    { event: 'ping', data: { type: 'ping' } },
  ], (events) => { for (const ev of events) sse!.named(ev.event, ev.data); });
  return {
    streamError: streamedError,
    deltas(_choice, deltas) { emit(blocks.push(deltas)); },
    end({ choices: [answer], done, figures }) {
      const reason = stopReason(answer!.finish, answer!.calls, done.stopString);
      const usage = anthropicUsage(figures.promptTokens, figures.reused, figures.generated);
      if (sse) {
        emit([
          ...blocks.end(),
          { event: 'message_delta', data: { type: 'message_delta', delta: { stop_reason: reason, stop_sequence: done.stopString ?? null }, usage: { output_tokens: usage.output_tokens } } },
          { event: 'message_stop', data: { type: 'message_stop' } },
        ]);
        sse.close();
        return;
      }
      sendJson(res, 200, messageObject({
        id, model: model.id, content: contentBlocks(answer!.reasoning, answer!.content, answer!.calls),
        stopReason: reason, stopSequence: done.stopString ?? null, usage,
      }));
    },
  };
}

export function messages(app: AppContext, ctx: RouteContext): Promise<void> {
  return anthropicErrors(app, ctx, async () => {
    const body = parseMessagesRequest(await readJson(ctx.req, app.bodies));
    if (body.omittedTools.length > 0) app.log.info('tools left out of the prompt: server tools this server cannot run', { types: [...new Set(body.omittedTools)].join(', ') });
    await runChatTurn(app, ctx.res, messagesTurnOf(body), { writer: messagesWriter });
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
