// OpenAI's Responses API as a chat turn (chat-turn/): POST /v1/responses prepares its conversation
// (a stored response's items when previous_response_id names one, then the request's input;
// instructions as the system message) and its deltas leave as output items (responses-shapes.ts),
// streamed as the Responses events or whole. A stored response keeps its whole conversation and its own tokens
// (responses/), so a follow-up continues from those tokens and their KV (in a slot, the park, or
// the response's KV file after an engine restart).
// GET and DELETE /v1/responses/{id}, GET /v1/responses/{id}/input_items; POST /v1/responses/input_tokens counts a request's prompt.
import { randomBytes } from 'node:crypto';
import type { ConversationItem, ResponseObject } from '../../../contract/responses.js';
import { chatMessagesOf } from '../../responses/conversation.js';
import { continuationTail } from '../../responses/continuation.js';
import { inputItemsPage, parsePageQuery, withIds } from '../../responses/input-items.js';
import { loadResponseKv, saveResponseKv } from '../../responses/response-kv.js';
import type { StoredResponse } from '../../responses/response-store.js';
import type { ChatInput, RenderedPrompt } from '../../chat/chat-prompt.js';
import { withThinkingDefault } from '../../chat/thinking-switch.js';
import { type ApiError, apiError, type ApiErrorBody } from '../../validation/errors.js';
import { MAX_IMAGES_PER_REQUEST } from '../../validation/limits.js';
import { parseResponsesRequest, type ResponsesRequest } from '../../validation/responses-schema.js';
import { withEffort } from '../../validation/schemas.js';
import type { AppContext } from '../app-context.js';
import { renderConversation } from '../chat-turn/choice-text.js';
import { runChatTurn } from '../chat-turn/run.js';
import { lazyStream, type ChatTurn, type TurnStart, type TurnWriter } from '../chat-turn/turn.js';
import { requireModel, tokenizeChat, tokenizeChatImages } from '../generation.js';
import { requireTextModel } from '../model-checks.js';
import type { ModelView } from '../../served-model/model-view.js';
import { EventNumbers, OutputStream, responseAt, responseUsage, type ResponseEvent } from '../responses-shapes.js';
import { readJson, sendJson } from '../respond.js';
import type { RouteContext } from '../router.js';

function effortKwargs(body: ResponsesRequest): Record<string, unknown> {
  return withEffort({}, body.reasoningEffort ?? undefined, 'reasoning.effort');
}

/** Images in a conversation's user messages. */
function imagesIn(items: readonly ConversationItem[]): number {
  return items.reduce((n, it) => n + (it.type === 'message' && Array.isArray(it.content) ? it.content.filter((p) => p.type === 'input_image').length : 0), 0);
}

/**
 * A conversation is read whole, its earlier images with it: they count against the request's cap,
 * so a chain of requests cannot make one read more images than a single request may send.
 */
function checkChainImages(earlier: readonly ConversationItem[], added: readonly ConversationItem[]): void {
  const before = imagesIn(earlier);
  const total = before + imagesIn(added);
  if (total > MAX_IMAGES_PER_REQUEST) {
    throw apiError('too_many_images', `input: the conversation would hold ${total} images (${before} of them from previous_response_id); at most ${MAX_IMAGES_PER_REQUEST} in one conversation`, { param: 'input' });
  }
}

/**
 * The conversation a request continues and adds to, rendered as the model's prompt. With
 * previous_response_id, `held` is the stored response's own tokens (prompt and output) and `tail`
 * what follows them (responses/continuation.ts), when the stored tokens are this model's and were
 * rendered as this request would render them (instructions, tools, template variables); else the
 * whole conversation is rendered again.
 */
async function conversationOf(app: AppContext, model: ModelView, body: ResponsesRequest) {
  let earlier: ConversationItem[] = [];
  let stored: StoredResponse | null = null;
  if (body.previousResponseId !== null) {
    stored = await app.responses.get(body.previousResponseId);
    if (!stored) {
      throw apiError('previous_response_not_found', `previous_response_id: no stored response ${body.previousResponseId} (never stored, deleted, or expired)`, { param: 'previous_response_id' });
    }
    earlier = stored.items;
  }
  const items = [...earlier, ...body.input];
  checkChainImages(earlier, body.input);
  const messages = chatMessagesOf(body.instructions, items);
  if (messages.length === 0) throw apiError('invalid_value', 'input: holds no message', { param: 'input' });
  const chat = {
    messages, tools: body.tools, toolChoice: body.toolChoice, parallelToolCalls: body.parallelToolCalls, templateKwargs: effortKwargs(body),
  };
  const whole = renderConversation(model, chat, app.config.reasoning);
  const kwargs = withThinkingDefault(chat.templateKwargs, app.config.reasoning);
  const rendering = JSON.stringify({ instructions: body.instructions, tools: body.tools, kwargs });
  let continued: { held: number[]; tail: RenderedPrompt } | null = null;
  const own = stored?.tokens;
  if (stored && own && own.model === model.session.identity && own.rendering === rendering) {
    const tail = continuationTail(model, {
      instructions: body.instructions, earlier, outputCount: stored.response.output.length, added: body.input, tools: body.tools, kwargs,
    });
    if (tail) continued = { held: own.ids, tail };
  }
  return { items, chat, rendering, continued, ...whole };
}

/** The prompt's tokens: the held tokens and the tail's, or the whole conversation's. */
async function promptOf(app: AppContext, model: ModelView, c: Awaited<ReturnType<typeof conversationOf>>, previous: string | null): Promise<ChatInput> {
  // A conversation with images is rendered whole: the held tokens hold no image bytes to read again.
  if (!c.continued || previous === null || c.rendered.images.length > 0) return tokenizeChatImages(app, model, c.rendered);
  await loadResponseKv({ scheduler: app.scheduler, log: app.log, responses: app.responses }, model, previous, c.continued.held);
  return { prompt: [...c.continued.held, ...await tokenizeChat(app, c.continued.tail)], images: [] };
}

export function responsesTurnOf(body: ResponsesRequest): ChatTurn {
  return {
    conversation: {
      messages: chatMessagesOf(body.instructions, body.input), tools: body.tools, toolChoice: body.toolChoice,
      parallelToolCalls: body.parallelToolCalls, templateKwargs: effortKwargs(body),
    },
    conversationField: 'input', stream: body.stream, n: 1, maxTokens: body.maxTokens, stop: [], ignoreEos: false,
    sampling: body.sampling, logprobs: null, constraint: body.constraint, draftMax: null, prediction: null,
    reasoningFormat: 'auto', thinking: { budget: null, effort: body.reasoningEffort }, returnProgress: false,
  };
}

type Conversation = Awaited<ReturnType<typeof conversationOf>>;

function responsesWriter(body: ResponsesRequest, conversation: Conversation, { app, model, run, res }: TurnStart): TurnWriter {
  const id = `resp_${randomBytes(16).toString('hex')}`;
  const base: Omit<ResponseObject, 'status' | 'output' | 'usage' | 'error' | 'incomplete_details'> = {
    id, object: 'response', created_at: Math.floor(Date.now() / 1000), instructions: body.instructions,
    max_output_tokens: body.maxTokens, model: model.id, parallel_tool_calls: body.parallelToolCalls,
    previous_response_id: body.previousResponseId, reasoning: { effort: body.reasoningEffort, summary: null },
    store: body.store, temperature: body.sampling.temperature ?? null, top_p: body.sampling.topP ?? null,
    text: { format: body.textFormat }, tool_choice: body.declaredToolChoice, tools: body.declaredTools, metadata: body.metadata,
  };
  const outputs = new OutputStream(id.slice('resp_'.length), body.toolMembers);
  const numbers = new EventNumbers();
  const sse = run.sse;
  // response.created and response.in_progress open the stream.
  const emit = lazyStream<ResponseEvent>(sse, () => {
    const now = responseAt(base, { status: 'in_progress' });
    return [{ type: 'response.created', response: now }, { type: 'response.in_progress', response: now }];
  }, (events) => { for (const ev of events) sse!.named(ev.type, numbers.number(ev)); });
  return {
    // A failure after the first event ends the stream as response.failed, with what was written so far.
    streamError(e) {
      const err = (e as ApiErrorBody)?.error;
      const failed = responseAt(base, { status: 'failed', output: outputs.items, error: { code: err?.code ?? 'server_error', message: err?.message ?? 'unknown error' } });
      return `event: response.failed\ndata: ${JSON.stringify(numbers.number({ type: 'response.failed', response: failed }))}\n\n`;
    },
    deltas(_choice, deltas) { emit(outputs.push(deltas)); },
    async end({ done, figures, prompt, outputIds }) {
      const cut = done.finish === 'length';
      emit(outputs.end(cut ? 'incomplete' : 'completed'));
      const usage = responseUsage(figures, figures.reasoningTokens ?? 0);
      const final = responseAt(base, { status: cut ? 'incomplete' : 'completed', output: outputs.items, usage });
      if (body.store) {
        // The model's own tokens, when every token of the answer came with its id (else a follow-up renders the conversation).
        const whole = outputIds.length === usage.output_tokens && (outputIds.length > 0 || outputs.items.length === 0);
        const tokens = whole ? { ids: [...prompt, ...outputIds], model: model.session.identity, rendering: conversation.rendering } : undefined;
        const kept = await app.responses.put({ response: final, items: [...withIds(conversation.items, id.slice('resp_'.length)), ...outputs.items], ...(tokens ? { tokens } : {}) });
        if (!kept) app.log.warn('response not stored: larger than the store (--responses-mib)', { request: run.rec.id, response: id });
        else if (tokens) saveResponseKv({ scheduler: app.scheduler, log: app.log, responses: app.responses }, model, id, tokens.ids, body.previousResponseId);
      }
      if (sse) {
        emit([{ type: cut ? 'response.incomplete' : 'response.completed', response: final }]);
        sse.close();
        return;
      }
      sendJson(res, 200, final);
    },
  };
}

export async function createResponse(app: AppContext, { req, res }: RouteContext): Promise<void> {
  const body = parseResponsesRequest(await readJson(req, app.bodies));
  if (body.omittedTools.length > 0) app.log.info('tools left out of the prompt: hosted tools this server cannot run', { types: [...new Set(body.omittedTools)].join(', ') });
  let conversation: Conversation | null = null;
  await runChatTurn(app, res, responsesTurnOf(body), {
    async prepare(model) {
      const c = conversation = await conversationOf(app, model, body);
      return { conversation: c.chat, toolsOn: c.toolsOn, rendered: c.rendered, tokens: () => promptOf(app, model, c, body.previousResponseId) };
    },
    writer: (start) => responsesWriter(body, conversation!, start),
  });
}

function notFound(id: string): ApiError {
  return apiError('response_not_found', `no stored response ${id} (never stored, deleted, or expired)`, { param: 'response_id' });
}

export async function getResponse(app: AppContext, { res, params }: RouteContext): Promise<void> {
  const id = params.id ?? '';
  const stored = await app.responses.get(id);
  if (!stored) throw notFound(id);
  sendJson(res, 200, stored.response);
}

export async function deleteResponse(app: AppContext, { res, params }: RouteContext): Promise<void> {
  const id = params.id ?? '';
  if (!(await app.responses.delete(id))) throw notFound(id);
  sendJson(res, 200, { id, object: 'response', deleted: true });
}

/** GET /v1/responses/{id}/input_items: what a stored response read, a page at a time. */
export async function listInputItems(app: AppContext, { res, params, url }: RouteContext): Promise<void> {
  const id = params.id ?? '';
  const query = parsePageQuery(url.searchParams);
  const stored = await app.responses.get(id);
  if (!stored) throw notFound(id);
  const read = stored.items.slice(0, stored.items.length - stored.response.output.length);
  sendJson(res, 200, inputItemsPage(read, query));
}

/** The prompt a request would read, in tokens (the conversation it continues included). */
export async function inputTokens(app: AppContext, { req, res }: RouteContext): Promise<void> {
  const body = parseResponsesRequest(await readJson(req, app.bodies));
  const model = requireModel(app);
  requireTextModel(model);
  const c = await conversationOf(app, model, body);
  const count = c.continued && c.rendered.images.length === 0
    ? c.continued.held.length + (await tokenizeChat(app, c.continued.tail)).length
    : (await tokenizeChatImages(app, model, c.rendered)).prompt.length;
  sendJson(res, 200, { object: 'response.input_tokens', input_tokens: count });
}
