// Runs one chat turn (turn.ts) for any dialect: the served model's checks, the conversation
// rendered with the model's template, the request booked, the prompt tokenized and checked against
// the context, the grammar for a constraint or tool calls, the thinking budget, the generation
// followed to its end; each choice's text goes through the reasoning splitter and the tool-call
// parser (choice-text.ts) and leaves as neutral deltas that the dialect's writer puts on the wire.
import type { ServerResponse } from 'node:http';
import type { AppContext } from '../app-context.js';
import { grammarFor, outputSpec } from '../constraint.js';
import {
  checkContext, figuresOf, follow, maxTokensFor, requireModel, settle, tokenizeChatImages, withRequest, type TokensEvent,
} from '../generation.js';
import { chatLogprobs } from '../logprob-shapes.js';
import { checkChoices, requireTextModel } from '../model-checks.js';
import { predictionSpec } from '../prediction.js';
import { budgetOf, withThinkingBudget } from '../thinking-budget.js';
import type { ModelView } from '../../served-model/model-view.js';
import { loadCachedPrefix, saveCachedPrefix } from '../../prefix-cache/prefix-reuse.js';
import { ChoiceText, renderConversation, toolCallsAsked, withFirstToolCall } from './choice-text.js';
import { sharedStart } from './shared-start.js';
import type { ChatTurn, Dialect, PreparedTurn } from './turn.js';

/** The default preparation: the conversation rendered whole, tokenized with its images. */
function prepareWhole(app: AppContext, model: ModelView, turn: ChatTurn): PreparedTurn {
  const { toolsOn, rendered } = renderConversation(model, turn.conversation, app.config.reasoning);
  return { conversation: turn.conversation, toolsOn, rendered, tokens: () => tokenizeChatImages(app, model, rendered) };
}

export async function runChatTurn(app: AppContext, res: ServerResponse, turn: ChatTurn, dialect: Dialect): Promise<void> {
  const model = requireModel(app);
  requireTextModel(model);
  checkChoices(turn.n, model);
  // Rendered before the request is booked: a template that refuses the conversation is a plain 400.
  const prepared = dialect.prepare ? await dialect.prepare(model) : prepareWhole(app, model, turn);
  const { toolsOn, rendered } = prepared;
  const style = model.template.callStyle;
  // Tests with random-weight models (--first-tool-call required): the conversation's first answer is a call.
  const conversation = withFirstToolCall(prepared.conversation, app.config.firstToolCall ?? 'auto');

  await withRequest(app, 'chat', turn.stream, res, async (run) => {
    const { prompt, images } = await prepared.tokens();
    checkContext(prompt, model, turn.conversationField);
    const shared = images.length === 0 ? await sharedStart(app, model, prepared.conversation, prompt, app.config.reasoning) : 0;
    const predicted = await predictionSpec(app, turn.prediction);
    const grammar = await grammarFor(app, {
      constraint: turn.constraint,
      // A constraint on the whole answer leaves tool calls no room (a forced one is refused by the parsers).
      tools: turn.constraint ? null : toolCallsAsked(conversation, style, turn.reasoningFormat, rendered.text),
    });
    if (grammar.warnings.length > 0) app.log.warn('tool schemas not enforced by the grammar', { request: run.rec.id, warnings: grammar.warnings.join(' | ') });
    const sampling = await withThinkingBudget(app, turn.sampling, rendered, budgetOf(app, turn.thinking));
    const writer = dialect.writer({ app, res, model, run, prompt });
    if (writer.streamError) run.sse?.setErrorFormat(writer.streamError);
    const choices = Array.from({ length: turn.n }, () => new ChoiceText(style, toolsOn, turn.reasoningFormat, rendered.text));
    const outputIds: number[] = [];
    const take = (i: number, piece: string, ev?: TokensEvent): void => {
      const c = choices[i]!;
      const tokens = ev?.ids.length ?? 0;
      const deltas = piece || tokens ? c.push(piece, tokens) : [];
      const logprobs = ev?.logprobs && turn.logprobs !== null ? chatLogprobs(ev.logprobs, turn.logprobs) : null;
      c.collect(deltas);
      if (logprobs) c.logprobs.push(...logprobs);
      if (deltas.length > 0 || logprobs) writer.deltas(i, deltas, logprobs);
    };

    // A long prompt's start from the prefix cache's folder when no slot or park holds it (after a restart).
    await loadCachedPrefix(app, model, prompt, images.length);
    const done = await follow(run, {
      prompt, maxTokens: maxTokensFor(turn.maxTokens, prompt.length, model, app.config.maxOutputTokens), sampling,
      ...(images.length > 0 ? { images } : {}),
      stop: turn.stop, ignoreEos: turn.ignoreEos,
      ...(shared > 0 ? { sharedPrefix: shared } : {}),
      // Tool-call markers that are control tokens render only when asked for.
      ...(toolsOn && model.toolMarkerTokens.length > 0 ? { renderTokens: model.toolMarkerTokens } : {}),
      ...outputSpec(turn, grammar),
      ...predicted,
    }, {
      onText(piece) { take(0, piece); },
      onTokens(ev) {
        const i = ev.choice ?? 0;
        if (i === 0) outputIds.push(...ev.ids);
        take(i, ev.text, ev);
      },
      ...(run.sse && turn.returnProgress && writer.progress ? { onProgress: (p) => writer.progress!(p) } : {}),
    });

    if (!settle(run, done)) return;
    // n > 1: each choice's withheld text comes with its own end.
    done.choices?.forEach((c, i) => { if (c.text) take(i, c.text); });
    choices.forEach((c, i) => {
      const tail = c.end();
      c.collect(tail);
      if (tail.length > 0) writer.deltas(i, tail, null);
    });
    if (choices.some((c) => c.parser.calls.length > 0)) run.request.outcome('tool_calls');
    const figures = {
      ...figuresOf(run.rec, done, turn.prediction !== null), warnings: grammar.warnings,
      reasoningTokens: choices.reduce((n, c) => n + c.reasoningTokens, 0),
    };
    await writer.end({
      done, figures, prompt, outputIds,
      choices: choices.map((c, i) => ({
        content: c.content, reasoning: c.reasoning, calls: c.parser.calls,
        finish: done.choices?.[i]?.finish ?? done.finish,
        ...(turn.logprobs !== null ? { logprobs: c.logprobs } : {}),
      })),
    });
    // The answer is out: a long prompt's KV goes to the prefix cache in the background.
    saveCachedPrefix(app, model, prompt, images.length, shared);
  });
}
