#pragma once
// The "copy" test models: hand-set weights (not random) for a llama model whose greedy
// continuation copies its context, the way an induction head does: layer 0 writes each position's
// previous two tokens into the residual (two heads that attend 1 and 2 positions back through
// RoPE alone), layer 1 attends to the most recent earlier position whose previous two tokens are
// the current and previous token, and copies the token found there into the output. So the model
// continues the latest text it has seen before, as prompt lookup drafts it. Random token vectors
// (seeded) give each token its identity; any further layers are zero (they cost what a real
// model's layers cost, so copy-0.5b decodes at a 0.5B model's speed).
//
// A copy model in GLM-4.5's architecture also carries a multi-token-prediction (NextN) block that
// follows the same rule one token ahead: its projection lays the token it reads, the trunk's
// current token and the trunk's previous token out as layer 1 sees them, and its attention is
// layer 1's, so over its own KV it copies what the trunk would copy at the next position.
#include <cstdint>
#include <string>

namespace strata {

// Every copy shape uses heads of this size and this RoPE base (see kShapes in test_model.cpp).
constexpr int64_t kCopyHeadDim = 128;
constexpr float kCopyRopeBase = 1e12f;

struct CopyModel {
  uint64_t seed = 0;
  int64_t n_embd = 0;
  int mtp_layer = -1;  // the NextN block's layer index, -1 without one
  bool neox = false;   // RoPE pairs (i, i + head_dim/2) instead of (2i, 2i + 1)
};

// Writes row `row` (ne0 values) of tensor `name` of a copy model.
void CopyModelRow(const CopyModel & model, const std::string & name, int64_t row, int64_t ne0, float * out);

}  // namespace strata
