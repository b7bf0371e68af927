// One sequence's sampler: the llama_sampler chain of its request, an optional grammar, and the
// log-probabilities a request may ask for. Engine thread only (one per sequence).
#pragma once
#include <memory>
#include <vector>

#include "grammar_trigger.h"
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

// log-softmax of `tok` over `logits`, and the `top` most likely tokens (most likely first).
TokenLogprob LogprobsOf(const float* logits, int32_t n_vocab, llama_token tok, int32_t top);

class SeqSampler {
 public:
  // Samples with its own clone of `grammar` (may be null: unconstrained). With `triggers` the
  // grammar is lazy (built by MakeGrammarSampler with them): sampling is free until the output
  // holds a trigger, then constrained from the trigger on. Feeds the prompt's tail to the penalties.
  SeqSampler(const SamplingParams& p, const llama_vocab* vocab, const llama_sampler* grammar,
             const GrammarTriggers* triggers, const std::vector<llama_token>& prompt);
  SeqSampler(const SeqSampler&) = delete;
  SeqSampler& operator=(const SeqSampler&) = delete;

  // Samples from the logits at batch index `idx` and accepts the token (chain and grammar).
  // With a grammar, a token the unconstrained chain picks is checked alone first; only when the
  // grammar rejects it does it constrain more (llama-server's shortcut): at temperature 0 the
  // most likely tokens first, else the whole vocabulary. Throws when the grammar allows nothing.
  llama_token Sample(llama_context* ctx, int32_t idx);

  // The grammar constrains this token (lazy: its trigger has come).
  bool constrained() const { return grammar_ != nullptr && scan_ == nullptr; }

 private:
  // The thinking budget (SamplingParams::think_budget): where the output is, and how far it got.
  enum class Think { Before, Inside, After };
  void TrackThinking(llama_token tok);
  // The next token of think_close, accepted as if sampled.
  llama_token ForceClose();

  void Watch(llama_token tok);
  void FillCandidates(const float* logits);
  bool GrammarAllows(llama_token tok);
  llama_token ConstrainedArgmax(const float* logits);
  llama_token ConstrainedSample(const float* logits);

  llama_sampler_ptr chain_;
  llama_sampler_ptr grammar_;  // null: unconstrained
  std::unique_ptr<TriggerScan> scan_;  // a lazy grammar's watch, until its trigger came
  const llama_vocab* vocab_;
  std::vector<char> piece_;
  const bool greedy_;
  const bool temp0_;
  const int32_t n_vocab_;
  std::vector<llama_token_data> cur_;
  const int32_t think_budget_;
  const std::vector<llama_token> think_open_;
  const std::vector<llama_token> think_close_;
  Think think_;
  int32_t think_count_ = 0;
  size_t think_match_ = 0;  // tokens of think_open_ (Before) or think_close_ (Inside) matched so far
  bool forcing_ = false;    // the budget is spent: think_close_ from think_match_ on
};

}  // namespace strata
