// POST /v1/edits/next (contract/next-edit.ts): the editable region around the user's last edit,
// rewritten as the model expects their next edit. The prompt is laid out in the model family's
// format (backend/next-edit/formats.ts); the region is the answer's prediction, so the unchanged
// lines are drafted and verified in a step each instead of decoded token by token. Greedy unless
// asked otherwise; the rewritten region is parsed out of the answer. Latest wins per
// supersede_key, as with infill: a newer request with the same key ends this one with 409.
import { basename } from 'node:path';
import type { NextEditBody } from '../../../contract/next-edit.js';
import { renderChatPrompt, type RenderedPrompt } from '../../chat/chat-prompt.js';
import { buildNextEditPrompt, chooseFormat, parseNextEditAnswer } from '../../next-edit/formats.js';
import { nextEditCounters } from '../../next-edit/next-edit-stats.js';
import { parseNextEditRequest } from '../../next-edit/request-schema.js';
import type { AppContext } from '../app-context.js';
import { checkContext, figuresOf, follow, requireModel, settle, tokenizeChat, tokenizeParts, withRequest } from '../generation.js';
import { requireTextModel } from '../model-checks.js';
import { timingsOf, usageOf } from '../openai-shapes.js';
import { readJson, sendJson } from '../respond.js';
import type { RouteContext } from '../router.js';

/** Room for the answer past the region's own length (an edit may add lines). */
const GROWTH_TOKENS = 128;

export async function nextEdit(app: AppContext, { req, res }: RouteContext): Promise<void> {
  const body = parseNextEditRequest(await readJson(req, app.bodies));
  const model = requireModel(app);
  requireTextModel(model);
  const format = chooseFormat(body.format, [model.id, model.info.metadata['general.name'] ?? '', basename(model.path)]);
  const built = buildNextEditPrompt(format, body);
  const counters = nextEditCounters(app.ledger);
  let answered = false;

  try {
    await withRequest(app, 'next_edit', false, res, async (run) => {
      // Request text is plain text in every layout: only the format's own text may hold control tokens.
      const rendered: RenderedPrompt = built.kind === 'raw'
        ? { text: built.segments.map((s) => s.text).join(''), segments: built.segments, addSpecial: true, images: [] }
        : renderChatPrompt(model, [{ role: 'system', content: built.system }, { role: 'user', content: built.user }], { addGenerationPrompt: true });
      const [prompt, parts] = await Promise.all([tokenizeChat(app, rendered), tokenizeParts(app, [built.prediction])]);
      checkContext(prompt, model, 'region');
      const prediction = parts.tokens[0] ?? [];
      const room = model.info.ctx - prompt.length;
      const maxTokens = Math.min(body.max_tokens ?? prediction.length + Math.max(GROWTH_TOKENS, prediction.length >> 1), room);
      let text = '';
      const done = await follow(run, {
        prompt, maxTokens, sampling: { temperature: body.temperature ?? 0 }, stop: built.stop, prediction,
        // Keyed apart from infill's: a completion and a next edit of one document do not replace each other.
        ...(body.supersede_key !== undefined ? { supersede: { key: `next-edit:${body.supersede_key}`, holdMs: 0 } } : {}),
      }, {
        onText(piece) { text += piece; },
      });
      if (!settle(run, done)) return;
      const figures = figuresOf(run.rec, done, true);
      const finish = done.finish === 'length' ? 'length' : 'stop';
      const parsed = parseNextEditAnswer(format, body, text, { stopped: done.stopString !== undefined, cut: finish === 'length' });
      const usage = usageOf(figures);
      const details = { accepted_prediction_tokens: figures.prediction?.accepted ?? 0, rejected_prediction_tokens: figures.prediction?.rejected ?? 0 };
      const answer: NextEditBody = {
        id: `nextedit-${run.rec.id}`, object: 'next_edit', created: Math.floor(Date.now() / 1000), model: model.id,
        format, outcome: parsed.outcome, region: parsed.region, text, finish_reason: finish,
        usage: { ...usage, completion_tokens_details: details },
        timings: numericTimings(timingsOf(figures)),
      };
      counters.answered(parsed.outcome, {
        accepted: details.accepted_prediction_tokens, rejected: details.rejected_prediction_tokens, completionTokens: usage.completion_tokens,
      });
      answered = true;
      sendJson(res, 200, answer);
    });
  } finally {
    // Superseded, refused after acceptance, an engine error, a client that left: no answer.
    if (!answered) counters.failed();
  }
}

/** llama-server's timings as the contract has them: the numeric figures only. */
function numericTimings(t: object): Record<string, number | null> {
  return Object.fromEntries(Object.entries(t).filter(([, v]) => v === null || typeof v === 'number'));
}
