// Tool-call validity: many chat requests offering the three nested-schema tools, each answer
// judged by what an agent can use: every tool call whose arguments parse as JSON and validate
// against its tool's schema (ajv) counts valid; a call that does not validate, an opener left in
// the content (the model began a call that did not come out as one) or an HTTP error (llama-server
// answers 500 when its parser cannot read the output) counts as an attempt that failed. Answers
// with no call attempt at all are counted apart (tool_choice "auto" lets the model answer in text).
import { Ajv, type ValidateFunction } from 'ajv';
import { banBias, BenchHttpError, postJson, type Target } from '../../backend/bench/client.js';
import { proseWords, seedOf } from '../../backend/bench/prompts.js';
import { AGENT_TOOLS, type BenchTool } from './agent-fixture.js';

export interface ValidityCounts {
  requests: number;
  /** Tool calls returned, and of those the ones that parse and validate. */
  calls: number;
  valid: number;
  /** Failed attempts that returned no call: an opener in the content, or an HTTP error. */
  malformed: number;
  /** Answers without any call attempt. */
  noCall: number;
  /** The first few failures, said. */
  failures: string[];
}

export function emptyCounts(): ValidityCounts {
  return { requests: 0, calls: 0, valid: 0, malformed: 0, noCall: 0, failures: [] };
}

/** Valid calls of all attempts (calls returned + malformed answers); NaN when none was attempted. */
export function validShare(c: ValidityCounts): number {
  const attempts = c.calls + c.malformed;
  return attempts > 0 ? c.valid / attempts : Number.NaN;
}

export type Validators = ReadonlyMap<string, ValidateFunction>;

export function validatorsFor(tools: readonly BenchTool[]): Validators {
  const ajv = new Ajv({ strict: false, allErrors: false });
  return new Map(tools.map((t) => [t.function.name, ajv.compile(t.function.parameters)]));
}

const KEEP = 5;

function note(c: ValidityCounts, why: string): void {
  if (c.failures.length < KEEP) c.failures.push(why.slice(0, 300));
}

/** Adds one answer (its HTTP status and body) to the counts. */
export function judgeAnswer(c: ValidityCounts, status: number, body: unknown, opener: string, validators: Validators): void {
  c.requests++;
  if (status < 200 || status >= 300) {
    c.malformed++;
    note(c, `HTTP ${status}: ${JSON.stringify(body).slice(0, 200)}`);
    return;
  }
  const message = (body as { choices?: Array<{ message?: { content?: unknown; tool_calls?: unknown } }> })?.choices?.[0]?.message;
  const calls = Array.isArray(message?.tool_calls) ? message!.tool_calls as Array<{ function?: { name?: unknown; arguments?: unknown } }> : [];
  for (const call of calls) {
    c.calls++;
    const name = call.function?.name;
    const validate = typeof name === 'string' ? validators.get(name) : undefined;
    if (!validate) { note(c, `call of an unknown tool ${JSON.stringify(name)}`); continue; }
    let args: unknown;
    try {
      args = JSON.parse(String(call.function?.arguments));
    } catch {
      note(c, `${name}: arguments are not JSON: ${String(call.function?.arguments).slice(0, 120)}`);
      continue;
    }
    if (validate(args)) c.valid++;
    else note(c, `${name}: ${JSON.stringify(validate.errors?.[0] ?? {})} in ${JSON.stringify(args).slice(0, 120)}`);
  }
  if (calls.length > 0) return;
  const content = typeof message?.content === 'string' ? message.content : '';
  if (content.includes(opener)) {
    c.malformed++;
    note(c, `an opened call came back as text: ${content.slice(content.indexOf(opener), content.indexOf(opener) + 120)}`);
  } else {
    c.noCall++;
  }
}

export interface ValidityRun {
  target: Target;
  requests: number;
  mode: 'auto' | 'required';
  /** The opener's text and token id; auto biases the token by `bias`. */
  opener: { text: string; id: number; bias: number };
  banned: readonly number[] | null;
  maxTokens: number;
  salt: string;
  onProgress?: (done: number) => void;
}

/** The run's requests one after another (the same prompts for every server given the same salt). */
export async function runToolValidity(run: ValidityRun): Promise<ValidityCounts> {
  const counts = emptyCounts();
  const validators = validatorsFor(AGENT_TOOLS);
  for (let i = 0; i < run.requests; i++) {
    const ban = (banBias(run.banned).logit_bias as Array<[number, number | false]> | undefined) ?? [];
    const bias: Array<[number, number | false]> = run.mode === 'auto' ? [...ban, [run.opener.id, run.opener.bias]] : ban;
    const body = {
      model: run.target.model, temperature: 0, max_tokens: run.maxTokens, tools: AGENT_TOOLS, tool_choice: run.mode, parallel_tool_calls: false,
      messages: [
        { role: 'system', content: 'You are a coding agent. Use the tools.' },
        { role: 'user', content: `${run.salt} ${proseWords(seedOf(`validity/${i}`), 12)}` },
      ],
      ...(bias.length > 0 ? { logit_bias: bias } : {}),
    };
    try {
      judgeAnswer(counts, 200, await postJson(run.target, '/v1/chat/completions', body, AbortSignal.timeout(600_000)), run.opener.text, validators);
    } catch (e) {
      if (e instanceof BenchHttpError) judgeAnswer(counts, e.status, e.body, run.opener.text, validators);
      else judgeAnswer(counts, 0, (e as Error).message, run.opener.text, validators);
    }
    run.onProgress?.(i + 1);
  }
  return counts;
}
