#include "sampling.h"

#include <algorithm>

namespace strata {

static bool HasPenalties(const SamplingParams& p) {
  return p.repeat_last_n != 0 &&
         (p.repeat_penalty != 1.0f || p.frequency_penalty != 0.0f || p.presence_penalty != 0.0f);
}

bool IsPlainGreedy(const SamplingParams& p) {
  return p.temperature <= 0.0f && p.logit_bias.empty() && !HasPenalties(p);
}

llama_token ArgmaxToken(const float* logits, int32_t n_vocab) {
  int32_t best = 0;
  float best_logit = logits[0];
  for (int32_t i = 1; i < n_vocab; ++i) {
    if (logits[i] > best_logit) {  // strict: the first maximum wins, as in llama's greedy sampler
      best_logit = logits[i];
      best = i;
    }
  }
  return best;
}

llama_sampler_ptr MakeSamplerChain(const SamplingParams& p, const llama_vocab* vocab) {
  llama_sampler_chain_params cp = llama_sampler_chain_default_params();
  cp.no_perf = true;
  llama_sampler_ptr owned(llama_sampler_chain_init(cp));
  llama_sampler* chain = owned.get();
  const int32_t n_vocab = llama_vocab_n_tokens(vocab);

  if (!p.logit_bias.empty()) {
    llama_sampler_chain_add(chain, llama_sampler_init_logit_bias(
        n_vocab, static_cast<int32_t>(p.logit_bias.size()), p.logit_bias.data()));
  }
  if (HasPenalties(p)) {
    llama_sampler_chain_add(chain, llama_sampler_init_penalties(
        n_vocab, p.repeat_last_n, p.repeat_penalty, p.frequency_penalty, p.presence_penalty));
  }
  if (p.temperature <= 0.0f) {
    llama_sampler_chain_add(chain, llama_sampler_init_greedy());
    return owned;
  }
  if (p.top_k > 0) llama_sampler_chain_add(chain, llama_sampler_init_top_k(p.top_k));
  if (p.top_p < 1.0f) llama_sampler_chain_add(chain, llama_sampler_init_top_p(p.top_p, 1));
  if (p.min_p > 0.0f) llama_sampler_chain_add(chain, llama_sampler_init_min_p(p.min_p, 1));
  llama_sampler_chain_add(chain, llama_sampler_init_temp(p.temperature));
  llama_sampler_chain_add(chain, llama_sampler_init_dist(p.seed));
  return owned;
}

void AcceptPromptTokens(llama_sampler* chain, const SamplingParams& p, const std::vector<llama_token>& prompt) {
  if (!HasPenalties(p)) return;
  const size_t n = p.repeat_last_n < 0 ? prompt.size()
                                       : std::min(prompt.size(), static_cast<size_t>(p.repeat_last_n));
  for (size_t i = prompt.size() - n; i < prompt.size(); ++i) llama_sampler_accept(chain, prompt[i]);
}

}  // namespace strata
