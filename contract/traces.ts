// GET /v1/traces and /v1/traces/{id}: the server's JSON (backend/metrics/traces.ts keeps the
// entries, backend/http/routes/diagnostics.ts answers), its runtime check, and the timelines the
// panel's Trace tab draws (on the server's clock, made by tracesView).
import * as z from 'zod/mini';
import type { RequestTrace, StepTrace } from '../native/lib/addon.js';
import { checkBody } from './check.js';
import type { RequestState } from './metrics.js';

// --- the server's JSON ---------------------------------------------------------------------

/** The engine's own record of a request (native RequestTrace): ms since that engine started. */
export type EngineRequestTrace = RequestTrace;

/** One ended request: the server's marks joined with the engine's trace of it. */
export interface TraceEntry {
  id: number;
  kind: string;
  replica: number | null;
  epoch: number | null;
  engine_id: number | null;
  slot: number | null;
  finish: string | null;
  error: string | null;
  accepted: string;
  /** ms after acceptance; null for marks the request never reached. */
  marks: { dispatched: number | null; admitted: number | null; first_token: number | null; engine_done: number | null; ended: number | null };
  prompt_tokens: number | null;
  reused: number | null;
  restored: boolean | null;
  generated: number;
  /** Speculative draft tokens verified and accepted. */
  drafted: number;
  draft_accepted: number;
  engine: EngineRequestTrace | null;
}

/** A request still in flight (GET /v1/traces/{id} before it ended): no marks yet. */
export interface LiveTraceEntry {
  id: number;
  kind: string;
  state: RequestState;
  replica: number | null;
  epoch: number | null;
  engine_id: number | null;
  slot: number | null;
  prompt_tokens: number | null;
  reused: number | null;
  generated: number;
  accepted: string;
}

/** One engine step (native StepTrace) and the replica and epoch it ran in. */
export interface StepEntry extends StepTrace { replica: number; epoch: number }

export interface TracesBody { object: 'list'; requests: TraceEntry[]; steps: StepEntry[] }
export interface TraceBody { request: TraceEntry | LiveTraceEntry; steps: StepEntry[] }

// --- its runtime check ---------------------------------------------------------------------

const num = z.number();
const nnum = z.nullable(num);
const leg = z.object({ t: num, tokens: num, ms: num });
const engineTrace: z.ZodMiniType<EngineRequestTrace> = z.object({
  id: num, queued: num, admitted: z.optional(num), promptDone: z.optional(num), firstToken: z.optional(num), finished: z.optional(num),
  slot: z.optional(num), reused: num, restored: z.boolean(), promptLegs: z.array(leg), drafted: num, accepted: num, choices: num,
});
const common = {
  id: num, kind: z.string(), replica: nnum, epoch: nnum, engine_id: nnum, slot: nnum, accepted: z.string(),
  prompt_tokens: nnum, reused: nnum, generated: num,
};
const traceEntry: z.ZodMiniType<TraceEntry> = z.object({
  ...common, finish: z.nullable(z.string()), error: z.nullable(z.string()), restored: z.nullable(z.boolean()),
  marks: z.object({ dispatched: nnum, admitted: nnum, first_token: nnum, engine_done: nnum, ended: nnum }),
  drafted: num, draft_accepted: num, engine: z.nullable(engineTrace),
});
const liveEntry: z.ZodMiniType<LiveTraceEntry> = z.object({ ...common, state: z.enum(['queued', 'admitting', 'running', 'finishing', 'ended']) });
const stepEntry: z.ZodMiniType<StepEntry> = z.object({
  step: num, t: num, buildMs: num, decodeMs: num, sampleMs: num, detokMs: num, decodeTokens: num, promptTokens: num,
  sequences: num, draftTokens: num, acceptedTokens: num, draftMs: num, replica: num, epoch: num,
});

export const tracesBodySchema: z.ZodMiniType<TracesBody> = z.object({ object: z.literal('list'), requests: z.array(traceEntry), steps: z.array(stepEntry) });
// An ended request has marks; a live one has a state.
export const traceBodySchema: z.ZodMiniType<TraceBody> = z.object({ request: z.union([traceEntry, liveEntry]), steps: z.array(stepEntry) });

// --- what the panel shows ------------------------------------------------------------------

export interface StepTraceView {
  step: number;
  t: number;
  buildMs: number;
  decodeMs: number;
  sampleMs: number;
  detokMs: number;
  decodeTokens: number;
  promptTokens: number;
  sequences: number;
}

/** One request's timeline; every time is ms after the server accepted it (null = never reached). */
export interface RequestTraceView {
  id: string;
  kind: string | null;
  replica: number | null;
  slot: number | null;
  finish: string | null;
  error: string | null;
  /** When the server accepted it (ms since epoch). */
  accepted: number | null;
  promptTokens: number | null;
  reused: number;
  restored: boolean;
  generated: number | null;
  /** Handed to an engine (left the server's queue). */
  dispatched: number | null;
  /** Got a slot in the engine. */
  admitted: number | null;
  promptDone: number | null;
  firstToken: number | null;
  finished: number | null;
  promptLegs: Array<{ t: number; tokens: number; ms: number }>;
}

export interface Traces {
  requests: RequestTraceView[];
  steps: StepTraceView[];
}

/**
 * A request's timeline on the server's clock. The engine's times count from its own start and
 * its `queued` is when it got the request, which is the server's `dispatched` mark.
 */
export function requestTraceView(r: TraceEntry | LiveTraceEntry): RequestTraceView {
  const base = {
    id: String(r.id), kind: r.kind, replica: r.replica, slot: r.slot, accepted: Date.parse(r.accepted),
    promptTokens: r.prompt_tokens, generated: r.generated,
  };
  if (!('marks' in r)) {
    return {
      ...base, finish: null, error: null, reused: r.reused ?? 0, restored: false,
      dispatched: null, admitted: null, promptDone: null, firstToken: null, finished: null, promptLegs: [],
    };
  }
  const { marks, engine } = r;
  const shift = engine && marks.dispatched !== null ? marks.dispatched - engine.queued : null;
  const onServerClock = (t: number | undefined): number | null => (t === undefined || shift === null ? null : t + shift);
  return {
    ...base,
    slot: r.slot ?? engine?.slot ?? null,
    finish: r.finish,
    error: r.error,
    reused: r.reused ?? engine?.reused ?? 0,
    restored: r.restored ?? engine?.restored ?? false,
    dispatched: marks.dispatched,
    admitted: onServerClock(engine?.admitted) ?? marks.admitted,
    promptDone: onServerClock(engine?.promptDone),
    firstToken: marks.first_token ?? onServerClock(engine?.firstToken),
    finished: marks.ended ?? marks.engine_done ?? onServerClock(engine?.finished),
    promptLegs: (engine?.promptLegs ?? []).map((l) => ({ t: shift === null ? l.t : l.t + shift, tokens: l.tokens, ms: l.ms })),
  };
}

export function stepTraceView(s: StepEntry): StepTraceView {
  return {
    step: s.step, t: s.t, buildMs: s.buildMs, decodeMs: s.decodeMs, sampleMs: s.sampleMs, detokMs: s.detokMs,
    decodeTokens: s.decodeTokens, promptTokens: s.promptTokens, sequences: s.sequences,
  };
}

/** Oldest first (the server lists newest first), so "last" means newest everywhere. */
export function tracesView(body: TracesBody): Traces {
  const requests = body.requests.map(requestTraceView)
    .sort((a, b) => (a.accepted ?? 0) - (b.accepted ?? 0) || Number(a.id) - Number(b.id));
  const steps = body.steps.map(stepTraceView).sort((a, b) => a.t - b.t);
  return { requests, steps };
}

/** GET /v1/traces's body, checked against the contract, as the panel shows it. */
export function parseTraces(raw: unknown): Traces {
  return tracesView(checkBody(tracesBodySchema, raw, 'GET /v1/traces'));
}

/** GET /v1/traces/{id}'s body, checked against the contract, as the panel shows it. */
export function parseRequestTrace(raw: unknown): RequestTraceView {
  return requestTraceView(checkBody(traceBodySchema, raw, 'GET /v1/traces/{id}').request);
}
