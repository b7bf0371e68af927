// POST /v1/tokenize and /v1/detokenize (llama-server's shapes).
import { apiError } from '../../validation/errors.js';
import { parseDetokenizeRequest, parseTokenizeRequest } from '../../validation/schemas.js';
import type { AppContext } from '../app-context.js';
import { onEngine, requireModel } from '../generation.js';
import { readJson, sendJson } from '../respond.js';
import type { RouteContext } from '../router.js';

export async function tokenize(app: AppContext, { req, res }: RouteContext): Promise<void> {
  const body = parseTokenizeRequest(await readJson(req, app.bodies));
  // Engine failures get their status from the engine-error table (a tokenize that fails: 503).
  const tokens = await onEngine(app, 'tokenize', 'could not tokenize', (c) => c.tokenize(body.content, body.addSpecial, body.parseSpecial));
  if (!body.withPieces) { sendJson(res, 200, { tokens }); return; }
  const pieces = await onEngine(app, 'detokenize', 'could not detokenize', (c) => Promise.all(tokens.map((id) => c.detokenize([id]))));
  sendJson(res, 200, { tokens: tokens.map((id, i) => ({ id, piece: pieces[i] })) });
}

export async function detokenize(app: AppContext, { req, res }: RouteContext): Promise<void> {
  const body = parseDetokenizeRequest(await readJson(req, app.bodies));
  const model = requireModel(app);
  const bad = body.tokens.findIndex((t) => t >= model.info.vocabSize);
  if (bad >= 0) throw apiError('invalid_value', `tokens[${bad}] is ${body.tokens[bad]}, outside the vocabulary of ${model.info.vocabSize}`, { param: `tokens[${bad}]` });
  const content = await onEngine(app, 'detokenize', 'could not detokenize', (c) => c.detokenize(body.tokens));
  sendJson(res, 200, { content });
}
