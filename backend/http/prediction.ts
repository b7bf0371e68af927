// A request's predicted output (OpenAI's `prediction`) as the engine's draft tokens: the client's
// text tokenized as plain text (never parsed as control tokens, no BOS), in one engine call.
import type { GenerationSpec } from '../scheduler/scheduler.js';
import type { AppContext } from './app-context.js';
import { tokenizeParts } from './generation.js';

/** The generation field for a prediction ({} without one; an empty text drafts nothing). */
export async function predictionSpec(app: AppContext, prediction: string | null): Promise<Partial<GenerationSpec>> {
  if (prediction === null) return {};
  if (prediction === '') return { prediction: [] };
  const { tokens } = await tokenizeParts(app, [prediction]);
  return { prediction: tokens[0] ?? [] };
}
