// GET /v1/traces as the panel's Trace tab shows it.

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
