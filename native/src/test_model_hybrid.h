#pragma once
// The hybrid test model: Qwen3.5's architecture (qwen35), gated delta net (linear attention,
// recurrent) layers with a full attention layer every fourth, and one multi-token-prediction
// (NextN) block after them. Random weights, the NextN block hand-set as the `mtp` shape's (it passes
// on the token's embedding, so it drafts by the trunk's embedding path: accepted where the trunk's
// layers do not change the top token). The recurrent state is what the engine must roll back where
// a draft is rejected, which a model of attention layers alone never asks of it.
#include <cstdint>
#include <vector>

#include "gguf.h"
#include "test_model.h"
#include "test_model_plan.h"

namespace strata {

// Every tensor of a model of `n_layer` trunk layers plus its NextN block (tied output).
std::vector<TensorPlan> HybridTensors(int64_t n_embd, int64_t n_layer, int64_t n_head, int64_t n_head_kv, int64_t n_ff,
                                      int64_t n_vocab, ggml_type wtype, const WeightScales & w);

// The architecture's own metadata (the recurrent layers' sizes, the attention interval, the rope
// sections, the NextN block), beside the common hyper-parameters.
void SetHybridMetadata(gguf_context * g, int64_t n_embd, int64_t n_head);

}  // namespace strata
