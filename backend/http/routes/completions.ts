// POST /v1/completions: a text (or token id) prompt, streamed or not; n choices, logprobs N,
// and llama-server's json_schema / grammar constraints.
import { parseCompletionRequest } from '../../validation/schemas.js';
import { apiError } from '../../validation/errors.js';
import type { AppContext } from '../app-context.js';
import { grammarFor, outputSpec } from '../constraint.js';
import { checkContext, figuresOf, follow, maxTokensFor, requireModel, settle, tokenizeRaw, withRequest, type PromptProgress } from '../generation.js';
import { completionLogprobs, joinCompletionLogprobs, type CompletionLogprobs } from '../logprob-shapes.js';
import { checkChoices, requireTextModel } from '../model-checks.js';
import { predictionSpec } from '../prediction.js';
import { completionChunk, completionResponseChoices, usageOf, timingsOf } from '../openai-shapes.js';
import { readJson, sendJson } from '../respond.js';
import type { RouteContext } from '../router.js';

export async function completions(app: AppContext, { req, res }: RouteContext): Promise<void> {
  const body = parseCompletionRequest(await readJson(req, app.bodies));
  const model = requireModel(app);
  requireTextModel(model);
  checkChoices(body.n, model);
  if (Array.isArray(body.prompt)) {
    const bad = body.prompt.findIndex((t) => t >= model.info.vocabSize);
    if (bad >= 0) throw apiError('invalid_value', `prompt[${bad}] is token id ${body.prompt[bad]}, outside the vocabulary of ${model.info.vocabSize}`, { param: `prompt[${bad}]` });
  }

  await withRequest(app, 'completion', body.stream, res, async (run) => {
    const prompt = typeof body.prompt === 'string' ? await tokenizeRaw(app, model, body.prompt) : body.prompt;
    checkContext(prompt, model, 'prompt');
    const predicted = await predictionSpec(app, body.prediction);
    const grammar = await grammarFor(app, { constraint: body.constraint });
    const id = `cmpl-${run.rec.id}`;
    const created = Math.floor(Date.now() / 1000);
    const top = body.logprobs;
    const choices = Array.from({ length: body.n }, () => ({ text: '', offset: 0, logprobs: [] as CompletionLogprobs[] }));
    const sse = run.sse;
    const emit = (i: number, piece: string, lps?: Parameters<typeof completionLogprobs>[0]): void => {
      const c = choices[i]!;
      let logprobs: CompletionLogprobs | null = null;
      if (lps && top !== null) {
        const r = completionLogprobs(lps, top, c.offset);
        logprobs = r.logprobs;
        c.offset = r.offset;
      }
      if (!piece && !logprobs) return;
      if (sse) { sse.event(completionChunk(id, model.id, created, piece, null, i, logprobs)); return; }
      c.text += piece;
      if (logprobs) c.logprobs.push(logprobs);
    };
    const done = await follow(run, {
      prompt, maxTokens: maxTokensFor(body.maxTokens, prompt.length, model, app.config.maxOutputTokens), sampling: body.sampling,
      stop: body.stop, ignoreEos: body.ignoreEos,
      ...outputSpec(body, grammar),
      ...predicted,
    }, {
      onText(piece) { emit(0, piece); },
      onTokens(ev) { emit(ev.choice ?? 0, ev.text, ev.logprobs); },
      ...(sse && body.returnProgress ? {
        onProgress: (p: PromptProgress) => sse.event({ ...completionChunk(id, model.id, created, '', null), prompt_progress: p }),
      } : {}),
    });
    if (!settle(run, done)) return;
    done.choices?.forEach((c, i) => { if (c.text) emit(i, c.text); });
    const finishOf = (f: string): 'stop' | 'length' => (f === 'length' ? 'length' : 'stop');
    const finishes = choices.map((_, i) => finishOf(done.choices?.[i]?.finish ?? done.finish));
    const figures = figuresOf(run.rec, done, body.prediction !== null);
    if (sse) {
      const last = choices.length - 1;
      for (let i = 0; i < last; i++) sse.event(completionChunk(id, model.id, created, '', finishes[i]!, i));
      sse.event({ ...completionChunk(id, model.id, created, '', finishes[last]!, last), usage: usageOf(figures), timings: timingsOf(figures) });
      sse.done();
      return;
    }
    sendJson(res, 200, completionResponseChoices({
      id, model: model.id, created, figures,
      choices: choices.map((c, i) => ({
        text: c.text, finish: finishes[i]!, ...(top !== null ? { logprobs: joinCompletionLogprobs(c.logprobs) } : {}),
      })),
    }));
  });
}
