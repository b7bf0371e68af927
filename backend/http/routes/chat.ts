// POST /v1/chat/completions: the body as a chat turn (chat-turn/), written back as chat completion
// chunks (role first, reasoning_content, content and tool_call deltas, a final chunk with
// finish_reason, usage and llama.cpp-style timings, then [DONE]) or as one chat.completion with a
// choice per n.
import { parseChatRequest, type ChatRequest } from '../../validation/schemas.js';
import type { AppContext } from '../app-context.js';
import { runChatTurn } from '../chat-turn/run.js';
import { lazyStream, type ChatTurn, type TurnStart, type TurnWriter } from '../chat-turn/turn.js';
import { ChatChunkBuilder, chatCompletionChoices, chatFinish } from '../openai-shapes.js';
import { readJson, sendJson } from '../respond.js';
import type { RouteContext } from '../router.js';

export function chatTurnOf(body: ChatRequest): ChatTurn {
  return {
    conversation: body, conversationField: 'messages', stream: body.stream, n: body.n, maxTokens: body.maxTokens,
    stop: body.stop, ignoreEos: body.ignoreEos, sampling: body.sampling, logprobs: body.logprobs,
    constraint: body.constraint, draftMax: body.draftMax, prediction: body.prediction,
    reasoningFormat: body.reasoningFormat, thinking: { budget: null, effort: body.reasoningEffort },
    returnProgress: body.returnProgress,
  };
}

function chatWriter(body: ChatRequest, { app, model, run, res }: TurnStart): TurnWriter {
  const chunks = new ChatChunkBuilder(`chatcmpl-${run.rec.id}`, model.id, Math.floor(Date.now() / 1000), app.fingerprint);
  const sse = run.sse;
  // The role chunks (one per choice) open the stream.
  const emit = lazyStream<unknown>(sse, () => Array.from({ length: body.n }, (_, i) => chunks.role(i)), (cs) => { for (const c of cs) sse!.event(c); });
  const send = (chunk: unknown): void => emit([chunk]);
  return {
    deltas(i, deltas, logprobs) {
      emit(chunks.deltas(deltas, i, logprobs));
    },
    progress(p) { send({ ...chunks.empty(), prompt_progress: p }); },
    end({ choices, figures }) {
      const finishes = choices.map((c) => chatFinish(c.finish, c.calls));
      if (sse) {
        const last = choices.length - 1;
        for (let i = 0; i < last; i++) send(chunks.finishOnly(finishes[i]!, i));
        send(chunks.final(finishes[last]!, figures, last));
        if (body.includeUsage) send(chunks.usageOnly(figures));
        sse.done();
        return;
      }
      sendJson(res, 200, chatCompletionChoices({
        id: chunks.id, model: model.id, created: chunks.created, fingerprint: app.fingerprint, figures,
        choices: choices.map((c, i) => ({ ...c, finish: finishes[i]! })),
      }));
    },
  };
}

export async function chatCompletions(app: AppContext, { req, res }: RouteContext): Promise<void> {
  const body = parseChatRequest(await readJson(req, app.bodies));
  await runChatTurn(app, res, chatTurnOf(body), { writer: (start) => chatWriter(body, start) });
}
