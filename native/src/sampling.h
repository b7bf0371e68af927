// Builds the llama_sampler chain of one request. Engine thread only.
#pragma once
#include <vector>

#include "llama-cpp.h"
#include "llama.h"
#include "request.h"

namespace strata {

// The chain for these params: logit bias, penalties, then greedy (temperature 0) or
// top_k / top_p / min_p / temperature / seeded dist.
llama_sampler_ptr MakeSamplerChain(const SamplingParams& p, const llama_vocab* vocab);

// True when the chain would be plain greedy: then ArgmaxToken gives the same token, without
// copying the vocabulary into a candidate array (the per-step cost that matters at many slots).
bool IsPlainGreedy(const SamplingParams& p);

// Index of the first largest logit, the greedy sampler's choice.
llama_token ArgmaxToken(const float* logits, int32_t n_vocab);

// Feeds the tail of the prompt to the chain so repeat penalties see it (as llama-server does).
void AcceptPromptTokens(llama_sampler* chain, const SamplingParams& p, const std::vector<llama_token>& prompt);

}  // namespace strata
