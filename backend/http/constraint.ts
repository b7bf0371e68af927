// Turns what a request asks its output to match (a JSON schema, JSON mode, a GBNF grammar, tool
// calls) into the GBNF the engine samples with. A forced tool call (tool_choice "required" or a
// named function) constrains the whole answer; with tool_choice "auto" the grammar is lazy: free
// text until the model opens a call, the call from its opener on. Schemas are checked here for
// keywords the converter would not enforce (a 400 for response_format and forced calls; under
// "auto" that tool's arguments fall back to any JSON object, with a warning in the answer's
// timings); the conversion itself runs on an engine (llama.cpp's json-schema-to-grammar), whose
// refusal is a 400 naming the field, or under "auto" the same fallback.
import type { GrammarSpec, GrammarTriggers } from '../../native/lib/addon.js';
import { ApiError, apiError, type ErrorCode } from '../validation/errors.js';
import type { GenerationParams, OutputConstraint } from '../validation/schemas.js';
import type { CallStyle, ToolSpec } from '../chat/chat-types.js';
import { EngineCallError, type EngineClient } from '../engine/client.js';
import { engineCallApiError } from '../validation/engine-errors.js';
import { checkShape, grammarShape } from '../validation/grammar-limits.js';
import { MAX_BUILT_GRAMMAR_BYTES } from '../validation/limits.js';
import { checkSchemaSupport, requireSupportedSchema, UnsupportedSchemaError } from '../grammar/schema-support.js';
import { toolCallGrammar, toolCallTriggers, withJsonStyle, type ToolCallRule } from '../grammar/tool-grammar.js';
import type { GenerationSpec } from '../scheduler/scheduler.js';
import type { AppContext } from './app-context.js';
import { readyEngine } from './generation.js';

/** What tool_choice asks of the answer: call(s) from its first token ('forced'), or allowed from an opener on ('lazy'). */
export interface ToolCallsAsked {
  rule: ToolCallRule;
  /** The request's tools (rule.tools may be one of them), for naming a tool in errors. */
  declared: readonly ToolSpec[];
  mode: 'forced' | 'lazy';
  style: CallStyle;
  /** lazy: the thinking block inside which no call opens (the reasoning splitter's view of it). */
  thinking: GrammarTriggers['thinking'] | null;
}

/** The grammar a request samples with, its triggers when lazy, and what could not be enforced. */
export interface OutputGrammar {
  grammar?: string;
  grammarTriggers?: GrammarTriggers;
  /** Tool schemas the grammar does not enforce (tool_choice "auto"): said in the answer's timings. */
  warnings: string[];
}

/** The grammar for the request's constraint or tool calls; no grammar when the output is free. */
export async function grammarFor(app: AppContext, opts: {
  constraint: OutputConstraint | null;
  tools?: ToolCallsAsked | null;
}): Promise<OutputGrammar> {
  const { constraint, tools } = opts;
  if (constraint?.kind === 'json_schema') {
    requireSupportedSchema(constraint.schema, constraint.param);
    return { grammar: await build(app, { schemas: { root: JSON.stringify(constraint.schema) } }, constraint.param), warnings: [] };
  }
  if (constraint?.kind === 'gbnf') return { grammar: await build(app, { gbnf: constraint.grammar }, constraint.param), warnings: [] };
  if (!tools || tools.rule.tools.length === 0) return { warnings: [] };
  if (tools.mode === 'forced') {
    tools.rule.tools.forEach((t) => {
      if (t.function.parameters !== undefined) requireSupportedSchema(t.function.parameters, toolParam(t, tools.declared));
    });
    const gbnf = await build(app, toolCallGrammar(tools.style, tools.rule), 'tool_choice');
    return { grammar: withJsonStyle(gbnf, tools.style.json), warnings: [] };
  }
  return lazyToolGrammar(app, tools);
}

/** `tools[i].function.parameters` for a tool of the request. */
function toolParam(tool: ToolSpec, declared: readonly ToolSpec[]): string {
  return `tools[${Math.max(0, declared.findIndex((d) => d.function.name === tool.function.name))}].function.parameters`;
}

const LOOSE = "its calls' arguments are checked as a JSON object only";

/**
 * tool_choice "auto": the lazy grammar over every tool, a tool whose schema the grammar cannot
 * enforce taking any JSON object as arguments (said in `warnings`), never a refusal.
 */
async function lazyToolGrammar(app: AppContext, asked: ToolCallsAsked): Promise<OutputGrammar> {
  const warnings: string[] = [];
  const all = asked.rule.tools;
  const loosen = (t: ToolSpec, why: string): ToolSpec => {
    warnings.push(`${toolParam(t, asked.declared)} (${t.function.name}): ${why}; ${LOOSE}`);
    return { ...t, function: { ...t.function, parameters: { type: 'object' } } };
  };
  let tools = all.map((t) => {
    if (t.function.parameters === undefined) return t;
    try {
      checkSchemaSupport(t.function.parameters);
      return t;
    } catch (e) {
      if (e instanceof UnsupportedSchemaError) return loosen(t, e.message);
      throw e;
    }
  });
  const client = readyEngine(app);
  const spec = (list: ToolSpec[]) => toolCallGrammar(asked.style, { tools: list, several: asked.rule.several }, 'lazy');
  let gbnf: string;
  try {
    gbnf = await client.buildGrammar(spec(tools));
  } catch (e) {
    refusalOrThrow(e, client);
    // The converter refused a schema the keyword check let through: find which, loosen those.
    const refused = await Promise.all(tools.map(async (t) => {
      try { await client.buildGrammar(spec([t])); return null; } catch (err) { return refusalOrThrow(err, client).why; }
    }));
    tools = tools.map((t, i) => (refused[i] !== null ? loosen(t, refused[i]!) : t));
    try {
      gbnf = await client.buildGrammar(spec(tools));
    } catch (err) {
      warnings.push(`tools: ${refusalOrThrow(err, client).why}; tool calls are not constrained`);
      return { warnings };
    }
  }
  try {
    checkBuilt(gbnf, 'tools');
  } catch (e) {
    if (!(e instanceof ApiError)) throw e;
    warnings.push(`${e.message}; tool calls are not constrained`);
    return { warnings };
  }
  const triggers = toolCallTriggers(asked.style);
  return {
    grammar: withJsonStyle(gbnf, asked.style.json),
    grammarTriggers: {
      ...(triggers.words.length ? { words: triggers.words } : {}),
      ...(triggers.atStart.length ? { atStart: triggers.atStart } : {}),
      ...(asked.thinking ? { thinking: asked.thinking } : {}),
    },
    warnings,
  };
}

/** The engine's words for why a call failed (never a message with its call's name cut off). */
function detailOf(e: unknown): string {
  return e instanceof EngineCallError ? e.detail : (e as Error)?.message ?? String(e);
}

/**
 * A grammar build's failure as the engine-error table answers it (validation/engine-errors.ts):
 * a refusal (the converter or the GBNF parser said no: 4xx) is returned for the caller to word;
 * anything else (the engine is gone, or went away meanwhile) is thrown as the table's answer.
 */
function refusalOrThrow(e: unknown, client: EngineClient): { code: ErrorCode; why: string } {
  const cause = client.status().state === 'ready' ? e : new EngineCallError('buildGrammar', detailOf(e), 'engine_unavailable');
  const answer = engineCallApiError(cause, 'buildGrammar', 'the engine could not build the grammar');
  if (answer.status >= 500) throw answer;
  return { code: answer.code, why: detailOf(e) };
}

async function build(app: AppContext, spec: GrammarSpec, param: string): Promise<string> {
  const client = readyEngine(app);
  let gbnf: string;
  try {
    gbnf = await client.buildGrammar(spec);
  } catch (e) {
    const refusal = refusalOrThrow(e, client);
    throw apiError(refusal.code, `${param}: ${refusal.why}`, { param });
  }
  if (!('gbnf' in spec)) checkBuilt(gbnf, param);
  return gbnf;
}

/**
 * A grammar converted from schemas within the limits a sent grammar has (limits.ts), or a 400 on
 * `param`: a small schema (an enum of thousands of values, bounded repetitions) can convert to a
 * grammar the sampler would take minutes over.
 */
function checkBuilt(gbnf: string, param: string): void {
  const bytes = Buffer.byteLength(gbnf, 'utf8');
  if (bytes > MAX_BUILT_GRAMMAR_BYTES) {
    throw apiError('grammar_too_large', `${param}: converts to a grammar of ${bytes} bytes; the limit is ${MAX_BUILT_GRAMMAR_BYTES} bytes`, { param });
  }
  checkShape(grammarShape(gbnf), param);
}

/** The generation fields a request's output options set (grammar, logprobs, choices, draft length). */
export function outputSpec(body: Pick<GenerationParams, 'logprobs' | 'n' | 'draftMax'>, grammar: OutputGrammar): Partial<GenerationSpec> {
  return {
    ...(grammar.grammar !== undefined ? { grammar: grammar.grammar } : {}),
    ...(grammar.grammarTriggers !== undefined ? { grammarTriggers: grammar.grammarTriggers } : {}),
    ...(body.logprobs !== null ? { logprobs: body.logprobs } : {}),
    ...(body.n > 1 ? { n: body.n } : {}),
    ...(body.draftMax !== null ? { draftMax: body.draftMax } : {}),
  };
}
