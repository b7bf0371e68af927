// Turns what a request asks its output to match (a JSON schema, JSON mode, a GBNF grammar, a
// forced tool call) into the GBNF the engine samples with. The schema is checked here for
// keywords the converter would not enforce; the conversion itself runs on an engine (llama.cpp's
// json-schema-to-grammar), whose refusal is a 400 naming the field.
import type { GrammarSpec } from '../../native/lib/addon.js';
import { ApiError } from '../validation/errors.js';
import type { GenerationParams, OutputConstraint } from '../validation/schemas.js';
import type { ToolCallFormat } from '../chat/chat-types.js';
import { EngineCallError } from '../engine/client.js';
import { requireSupportedSchema } from '../grammar/schema-support.js';
import { toolCallGrammar, type ForcedCalls } from '../grammar/tool-grammar.js';
import type { GenerationSpec } from '../scheduler/scheduler.js';
import type { AppContext } from './app-context.js';
import { requireTokenizer } from './generation.js';

/** GBNF for the request's constraint; undefined when the output is free. */
export async function grammarFor(app: AppContext, opts: {
  constraint: OutputConstraint | null;
  /** A tool call the answer must be (tool_choice "required" or a named function). */
  forced?: { format: ToolCallFormat; calls: ForcedCalls; param: string } | null;
}): Promise<string | undefined> {
  let spec: GrammarSpec;
  let param: string;
  if (opts.forced) {
    opts.forced.calls.tools.forEach((t, i) => {
      if (t.function.parameters !== undefined) requireSupportedSchema(t.function.parameters, `tools[${i}].function.parameters`);
    });
    spec = toolCallGrammar(opts.forced.format, opts.forced.calls);
    param = opts.forced.param;
  } else if (opts.constraint?.kind === 'json_schema') {
    requireSupportedSchema(opts.constraint.schema, opts.constraint.param);
    spec = { schemas: { root: JSON.stringify(opts.constraint.schema) } };
    param = opts.constraint.param;
  } else if (opts.constraint?.kind === 'gbnf') {
    spec = { gbnf: opts.constraint.grammar };
    param = opts.constraint.param;
  } else {
    return undefined;
  }
  const client = requireTokenizer(app);
  try {
    return await client.buildGrammar(spec);
  } catch (e) {
    const message = (e as Error)?.message ?? String(e);
    // The engine answers a refusal as "buildGrammar: <why>"; an engine that is gone is a 503.
    const gone = e instanceof EngineCallError && (e.code === 'engine_unavailable' || e.code === 'engine_closed');
    if (gone || client.status().state !== 'ready') throw new ApiError(503, `the engine could not build the grammar: ${message}`, { code: 'engine_unavailable' });
    throw new ApiError(400, `${param}: ${message.replace(/^buildGrammar: /, '')}`, { param, code: 'unsupported_schema' });
  }
}

/** The generation fields a request's output options set (grammar, logprobs, choices, draft length). */
export function outputSpec(body: Pick<GenerationParams, 'logprobs' | 'n' | 'draftMax'>, grammar: string | undefined): Partial<GenerationSpec> {
  return {
    ...(grammar !== undefined ? { grammar } : {}),
    ...(body.logprobs !== null ? { logprobs: body.logprobs } : {}),
    ...(body.n > 1 ? { n: body.n } : {}),
    ...(body.draftMax !== null ? { draftMax: body.draftMax } : {}),
  };
}
