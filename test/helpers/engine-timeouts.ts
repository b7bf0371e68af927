// The engine client's load and silence limits as `strata serve` passes them (its option table's
// defaults): the client has no limits of its own, so tests that build one pass these.
import { defaultOf } from '../../backend/app/serve-options.js';

export const SERVE_ENGINE_TIMEOUTS = {
  readyTimeoutMs: defaultOf('engineReadyTimeoutMs'),
  silenceTimeoutMs: defaultOf('engineSilenceTimeoutMs'),
};
