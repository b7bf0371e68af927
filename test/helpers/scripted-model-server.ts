// A scripted OpenAI-compatible server for the editor features whose logic needs sensible model
// output (random-weight test models answer noise): next-edit answers from a "model" that finishes a
// rename the last edit began, and streamed infill candidates whose first one finishes while the
// others wait for the test to let them go. It answers what the extension asks in remote mode
// (/health, /v1/models, /metrics as 404) and keeps every request it read, checked against the
// contract. Used by the unit tests and by the e2e runner (which starts it beside VS Code).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import * as z from 'zod/mini';
import { checkBody } from '../../contract/check.js';
import type { NextEditBody, NextEditRequest } from '../../contract/next-edit.js';

const nextEditRequest: z.ZodMiniType<NextEditRequest> = z.object({
  model: z.optional(z.string()), file: z.string(), language: z.optional(z.string()), region: z.string(),
  cursor: z.optional(z.nullable(z.number())), before: z.optional(z.string()), after: z.optional(z.string()),
  start_of_file: z.optional(z.boolean()),
  edits: z.optional(z.array(z.object({ file: z.string(), diff: z.string() }))),
  context: z.optional(z.array(z.object({ file: z.string(), text: z.string() }))),
  format: z.optional(z.enum(['zeta', 'instinct', 'generic', 'auto'])), max_tokens: z.optional(z.number()),
  temperature: z.optional(z.number()), supersede_key: z.optional(z.string()),
});

/** A request as the scripted server reads it: the contract's shape, and the cursor inside the region. */
export function checkNextEditRequest(raw: unknown): NextEditRequest {
  const body = checkBody(nextEditRequest, raw, 'POST /v1/edits/next request');
  if (body.cursor !== undefined && body.cursor !== null && !(body.cursor >= 0 && body.cursor <= body.region.length)) {
    throw new Error(`cursor ${body.cursor} is not inside the region (${body.region.length} characters)`);
  }
  return body;
}

/** The word a unified diff's first changed line pair renamed: [old, new], or undefined. */
export function renamedWord(diff: string): [string, string] | undefined {
  const lines = diff.split('\n');
  const removed = lines.filter((l) => l.startsWith('-')).map((l) => l.slice(1));
  const added = lines.filter((l) => l.startsWith('+')).map((l) => l.slice(1));
  for (let i = 0; i < Math.min(removed.length, added.length); i++) {
    const a = removed[i]!.match(/\w+|\W/g) ?? [];
    const b = added[i]!.match(/\w+|\W/g) ?? [];
    if (a.length !== b.length) continue;
    const at = a.findIndex((t, k) => t !== b[k]);
    if (at >= 0 && /^\w+$/.test(a[at]!) && /^\w+$/.test(b[at]!)) return [a[at]!, b[at]!];
  }
  return undefined;
}

/** The scripted next-edit model: the region with the last edit's rename applied everywhere in it. */
export function renameAnswer(body: NextEditRequest): string {
  const region = body.region;
  const last = body.edits?.[body.edits.length - 1];
  const rename = last && renamedWord(last.diff);
  if (!rename) return region;
  return region.replace(new RegExp(`\\b${rename[0]}\\b`, 'g'), rename[1]);
}

export interface RecordedRequest {
  path: string; body: Record<string, unknown>; aborted: boolean;
  /** Resolves when the response is closed (finished, or aborted by the client). */
  closed: Promise<void>;
}

export interface InfillScript {
  /** The candidates by index; index 0 finishes first. */
  candidates: string[];
  /** The others wait for release() after the first has finished. */
  holdOthers: boolean;
}

/** One scripted chat answer: thinking, text, then tool calls (streamed in pieces as a server sends them). */
export interface ChatTurnScript {
  /** The model's thinking, one reasoning_content chunk a piece (a token each in usage's reasoning_tokens), before the text. */
  reasoning?: string[];
  /** Between thinking pieces, as a model takes time to think. */
  reasoningDelayMs?: number;
  text?: string;
  toolCalls?: Array<{ id?: string; name: string; arguments: string }>;
  /** The answer waits for this after its first text piece (a test presses Stop meanwhile). */
  hold?: () => Promise<void>;
}

export class ScriptedModelServer {
  readonly requests: RecordedRequest[] = [];
  url = '';
  private server: Server | undefined;
  private release: (() => void) | undefined;
  private released: Promise<void> = Promise.resolve();
  private readonly waiters: Array<{ path: string; count: number; resolve: () => void }> = [];

  constructor(private readonly script: {
    /** The infill answer for a request (undefined: an empty completion). */
    infill?: (body: Record<string, unknown>) => InfillScript | undefined;
    nextEdit?: (body: NextEditRequest) => string;
    /** Infill refuses n > 1 as a Strata server without candidates does (400 naming `n`). */
    refuseN?: boolean;
    /** Next-edit answers wait for this before they are sent (to test superseding). */
    holdNextEdit?: () => Promise<void>;
    /** The chat answer to the `index`-th chat request (0-based); undefined: an empty answer. */
    chat?: (body: Record<string, unknown>, index: number) => ChatTurnScript | undefined;
    /**
     * A context per slot, as a Strata server reports it (/v1/models meta.n_ctx): chat prompts are
     * then counted as the stand-in tokenizer counts (a token per 4 characters of the messages and
     * tools) and one that does not fit is refused with Strata's 400.
     */
    slotContext?: number;
    /** GET /props answers this (llama-server's server properties); absent: 404, as Strata answers. */
    props?: Record<string, unknown>;
  } = {}) {}

  async start(): Promise<string> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((r) => this.server!.listen(0, '127.0.0.1', r));
    const a = this.server.address();
    this.url = `http://127.0.0.1:${typeof a === 'object' && a ? a.port : 0}`;
    return this.url;
  }

  /** From now on infill candidates after the first wait until `let go` is called. */
  holdCandidates(): () => void {
    this.released = new Promise<void>((r) => { this.release = r; });
    return () => this.release?.();
  }

  /** Resolves once `count` requests to `path` have been read. */
  waitFor(path: string, count: number): Promise<void> {
    if (this.requests.filter((r) => r.path === path).length >= count) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ path, count, resolve }));
  }

  of(path: string): RecordedRequest[] {
    return this.requests.filter((r) => r.path === path);
  }

  async close(): Promise<void> {
    this.release?.();
    this.server?.closeAllConnections();
    await new Promise<void>((r) => (this.server ? this.server.close(() => r()) : r()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let text = '';
    for await (const chunk of req) text += String(chunk);
    const path = (req.url ?? '').split('?')[0]!;
    const body = (text ? JSON.parse(text) : {}) as Record<string, unknown>;
    let closed!: () => void;
    const rec: RecordedRequest = { path, body, aborted: false, closed: new Promise<void>((r) => { closed = r; }) };
    res.on('close', () => { if (!res.writableFinished) rec.aborted = true; closed(); });
    this.requests.push(rec);
    for (const w of [...this.waiters]) {
      if (w.path === path && this.of(path).length >= w.count) {
        this.waiters.splice(this.waiters.indexOf(w), 1);
        w.resolve();
      }
    }
    const json = (status: number, o: unknown): void => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(o));
    };
    if (path === '/health') return json(200, { status: 'ok', model: 'scripted' });
    if (path === '/props' && this.script.props) return json(200, this.script.props);
    if (path === '/v1/models') return json(200, { object: 'list', data: [{ id: 'scripted', object: 'model', ...(this.script.slotContext ? { meta: { n_ctx: this.script.slotContext } } : {}) }] });
    if (path === '/v1/edits/next' && this.script.nextEdit) {
      let parsed: NextEditRequest;
      try {
        parsed = checkNextEditRequest(body);
      } catch (err) {
        return json(400, { error: { message: (err as Error).message, type: 'invalid_request_error', code: 'invalid_request', param: null } });
      }
      await this.script.holdNextEdit?.();
      const region = this.script.nextEdit(parsed);
      const answer: NextEditBody = {
        id: `nextedit-${this.requests.length}`, object: 'next_edit', created: Math.floor(Date.now() / 1000), model: 'scripted',
        format: 'generic', outcome: region === parsed.region ? 'unchanged' : 'edited', region, text: region, finish_reason: 'stop',
        usage: {
          prompt_tokens: 10, completion_tokens: 5, total_tokens: 15, prompt_tokens_details: { cached_tokens: 0 },
          completion_tokens_details: { accepted_prediction_tokens: 4, rejected_prediction_tokens: 1 },
        },
        timings: {},
      };
      if (!res.destroyed) json(200, answer);
      return;
    }
    if (path === '/v1/infill') return this.infill(body, res);
    if (path === '/v1/chat/completions' && this.script.chat) return this.chat(body, res);
    // A stand-in tokenizer for the chat's prompt planning: a token per 4 characters.
    if (path === '/v1/tokenize' && this.script.chat) return json(200, { tokens: Array.from({ length: Math.ceil(String(body.content ?? '').length / 4) }, (_, i) => i) });
    json(404, { error: { message: `no route ${path}`, type: 'invalid_request_error', code: 'not_found', param: null } });
  }

  private async infill(body: Record<string, unknown>, res: ServerResponse): Promise<void> {
    const script = this.script.infill?.(body) ?? { candidates: [''], holdOthers: false };
    const n = typeof body.n === 'number' ? body.n : 1;
    if (n > 1 && this.script.refuseN) {
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: 'n: only 1 is supported on infill', type: 'invalid_request_error', code: 'unsupported_value', param: 'n' } }));
      return;
    }
    const candidates = script.candidates.slice(0, n);
    if (body.stream !== true) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ content: candidates[0] ?? '', choices: candidates.map((text, index) => ({ index, text, finish_reason: 'stop' })) }));
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const send = (index: number, text: string, finish: string | null): void => {
      res.write(`data: ${JSON.stringify({ object: 'text_completion', choices: [{ index, text, finish_reason: finish }] })}\n\n`);
    };
    const stream = (index: number): void => {
      const t = candidates[index] ?? '';
      const half = Math.ceil(t.length / 2);
      send(index, t.slice(0, half), null);
      send(index, t.slice(half), 'stop');
    };
    stream(0);
    if (script.holdOthers) await this.released;
    if (res.destroyed) return;
    for (let i = 1; i < candidates.length; i++) stream(i);
    res.end('data: [DONE]\n\n');
  }

  private async chat(body: Record<string, unknown>, res: ServerResponse): Promise<void> {
    // A request without messages (the extension's probe for the route) is refused as a server refuses it, and is no turn.
    if (!Array.isArray(body.messages)) {
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: 'messages: required', type: 'invalid_request_error', code: 'invalid_request', param: 'messages' } }));
      return;
    }
    const turns = this.of('/v1/chat/completions').filter((r) => Array.isArray(r.body.messages));
    const turn = this.script.chat!(body, turns.length - 1) ?? {};
    const calls = (turn.toolCalls ?? []).map((c, i) => ({ id: c.id ?? `call_${this.requests.length}_${i}`, name: c.name, arguments: c.arguments }));
    const finish = calls.length ? 'tool_calls' : 'stop';
    const prompt = this.script.slotContext ? Math.ceil(JSON.stringify([body.messages, body.tools ?? null]).length / 4) : 20;
    if (this.script.slotContext && prompt >= this.script.slotContext) {
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: `messages is ${prompt} tokens, which does not fit the context of ${this.script.slotContext} tokens per slot (--ctx)`, type: 'invalid_request_error', code: 'context_length_exceeded', param: 'messages' } }));
      return;
    }
    const thought = turn.reasoning ?? [];
    const usage = {
      prompt_tokens: prompt, completion_tokens: 5 + thought.length, total_tokens: prompt + 5 + thought.length,
      ...(thought.length ? { completion_tokens_details: { reasoning_tokens: thought.length } } : {}),
    };
    if (body.stream !== true) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({
        id: 'chat', object: 'chat.completion', model: 'scripted', usage,
        choices: [{ index: 0, finish_reason: finish, message: { role: 'assistant', content: turn.text ?? '', ...(thought.length ? { reasoning_content: thought.join('') } : {}), ...(calls.length ? { tool_calls: calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } })) } : {}) } }],
      }));
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const send = (delta: Record<string, unknown>, finishReason: string | null = null): void => {
      res.write(`data: ${JSON.stringify({ id: 'chat', object: 'chat.completion.chunk', model: 'scripted', choices: [{ index: 0, delta, finish_reason: finishReason }] })}\n\n`);
    };
    send({ role: 'assistant', content: '' });
    for (const piece of thought) {
      if (turn.reasoningDelayMs) await new Promise((r) => setTimeout(r, turn.reasoningDelayMs));
      if (res.destroyed) return;
      send({ reasoning_content: piece });
    }
    const text = turn.text ?? '';
    const half = Math.ceil(text.length / 2);
    if (text) send({ content: text.slice(0, half) });
    if (turn.hold) await turn.hold();
    if (res.destroyed) return;
    if (text.slice(half)) send({ content: text.slice(half) });
    calls.forEach((c, index) => {
      const cut = Math.ceil(c.arguments.length / 2);
      send({ tool_calls: [{ index, id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments.slice(0, cut) } }] });
      send({ tool_calls: [{ index, function: { arguments: c.arguments.slice(cut) } }] });
    });
    send({}, finish);
    res.write(`data: ${JSON.stringify({ id: 'chat', object: 'chat.completion.chunk', model: 'scripted', choices: [], usage })}\n\n`);
    res.end('data: [DONE]\n\n');
  }
}
