// Appending one token to a llama_batch (one sequence per token): the engine's step, the draft
// model and embedding steps build their batches with it.
#pragma once
#include "llama.h"

namespace strata {

inline void BatchAdd(llama_batch& b, llama_token tok, llama_pos pos, llama_seq_id seq, bool logits) {
  const int32_t i = b.n_tokens++;
  b.token[i] = tok;
  b.pos[i] = pos;
  b.n_seq_id[i] = 1;
  b.seq_id[i][0] = seq;
  b.logits[i] = logits ? 1 : 0;
}

}  // namespace strata
