// POST /v1/completions: a text (or token id) prompt, streamed or not.
import { parseCompletionRequest } from '../../api/schemas.js';
import { ApiError } from '../../api/errors.js';
import type { AppContext } from '../app-context.js';
import { checkContext, figuresOf, follow, maxTokensFor, requireModel, settle, tokenizeRaw, withRequest, type PromptProgress } from '../generation.js';
import { completionChunk, completionResponse, usageOf, timingsOf } from '../openai-shapes.js';
import { readJson, sendJson } from '../respond.js';
import type { RouteContext } from '../router.js';

export async function completions(app: AppContext, { req, res }: RouteContext): Promise<void> {
  const body = parseCompletionRequest(await readJson(req, app.config.bodyLimitMib * 1024 * 1024));
  const model = requireModel(app);
  if (Array.isArray(body.prompt)) {
    const bad = body.prompt.findIndex((t) => t >= model.info.vocabSize);
    if (bad >= 0) throw new ApiError(400, `prompt[${bad}] is token id ${body.prompt[bad]}, outside the vocabulary of ${model.info.vocabSize}`, { param: `prompt[${bad}]` });
  }

  await withRequest(app, 'completion', body.stream, res, async (run) => {
    const prompt = typeof body.prompt === 'string' ? await tokenizeRaw(app, model, body.prompt) : body.prompt;
    checkContext(prompt, model, 'prompt');
    const id = `cmpl-${run.rec.id}`;
    const created = Math.floor(Date.now() / 1000);
    let text = '';
    const sse = run.sse;
    const done = await follow(run, {
      prompt, maxTokens: maxTokensFor(body.maxTokens, prompt.length, model), sampling: body.sampling,
      stop: body.stop, ignoreEos: body.ignoreEos,
    }, {
      onText(piece) {
        if (sse) sse.event(completionChunk(id, model.id, created, piece, null));
        else text += piece;
      },
      ...(sse && body.returnProgress ? {
        onProgress: (p: PromptProgress) => sse.event({ ...completionChunk(id, model.id, created, '', null), prompt_progress: p }),
      } : {}),
    });
    if (!settle(run, done)) return;
    const finish = done.finish === 'length' ? 'length' : 'stop';
    const figures = figuresOf(run.rec, done);
    if (sse) {
      sse.event({ ...completionChunk(id, model.id, created, '', finish), usage: usageOf(figures), timings: timingsOf(figures) });
      sse.done();
      return;
    }
    sendJson(res, 200, completionResponse({ id, model: model.id, created, text, finish, figures }));
  });
}
