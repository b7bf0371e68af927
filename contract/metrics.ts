// GET /metrics as the panel, the status bar and @strata show it.

export interface SlotMetric {
  slot: number;
  replica: number | null;
  state: string;
  heldTokens: number;
  requestId: string | null;
  tokS: number | null;
}

export interface RequestRecord {
  id: string | null;
  time: number | null;
  durationMs: number | null;
  finish: string | null;
  promptTokens: number | null;
  reusedTokens: number | null;
  outputTokens: number | null;
  promptMs: number | null;
  decodeMs: number | null;
  decodeTokS: number | null;
}

export interface ConversationCacheMetric {
  parked: number;
  bytes: number;
  budget: number;
  hits: number;
  misses: number;
  evictions: number;
}

export interface EngineMetric {
  replica: number;
  epoch: number;
  pid: number | null;
  alive: boolean;
  restarts: number;
  devices: string[];
}

export interface Metrics {
  state: string;
  queued: number;
  admitting: number;
  running: number;
  finishing: number;
  slots: SlotMetric[];
  requests: RequestRecord[];
  totals: Record<string, number>;
  cache: ConversationCacheMetric;
  engines: EngineMetric[];
  staleFrames: number;
}
