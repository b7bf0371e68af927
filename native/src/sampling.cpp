#include "sampling.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

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

TokenLogprob LogprobsOf(const float* logits, int32_t n_vocab, llama_token tok, int32_t top) {
  float max = logits[0];
  for (int32_t i = 1; i < n_vocab; ++i) max = std::max(max, logits[i]);
  double sum = 0;
  for (int32_t i = 0; i < n_vocab; ++i) sum += std::exp(static_cast<double>(logits[i] - max));
  const double log_z = static_cast<double>(max) + std::log(sum);
  TokenLogprob out;
  out.id = tok;
  out.logprob = static_cast<float>(logits[tok] - log_z);
  if (top <= 0) return out;
  // The `top` largest logits in one pass (a small sorted window; top is at most a few dozen).
  std::vector<llama_token> best;
  best.reserve(static_cast<size_t>(top) + 1);
  for (int32_t i = 0; i < n_vocab; ++i) {
    if (static_cast<int32_t>(best.size()) == top && logits[i] <= logits[best.back()]) continue;
    auto at = std::upper_bound(best.begin(), best.end(), i, [&](llama_token a, llama_token b) { return logits[a] > logits[b]; });
    best.insert(at, i);
    if (static_cast<int32_t>(best.size()) > top) best.pop_back();
  }
  for (llama_token id : best) out.top.push_back({id, static_cast<float>(logits[id] - log_z), {}, {}});
  return out;
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

SeqSampler::SeqSampler(const SamplingParams& p, const llama_vocab* vocab, const llama_sampler* grammar,
                       const GrammarTriggers* triggers, const std::vector<llama_token>& prompt)
    : chain_(MakeSamplerChain(p, vocab)), grammar_(grammar ? llama_sampler_clone(grammar) : nullptr),
      scan_(grammar && triggers ? std::make_unique<TriggerScan>(*triggers) : nullptr),
      vocab_(vocab), piece_(64), greedy_(IsPlainGreedy(p)), temp0_(p.temperature <= 0.0f),
      n_vocab_(llama_vocab_n_tokens(vocab)),
      think_budget_(p.think_close.empty() ? -1 : p.think_budget), think_open_(p.think_open), think_close_(p.think_close),
      think_(p.think_inside ? Think::Inside : think_open_.empty() ? Think::After : Think::Before) {
  forcing_ = think_ == Think::Inside && think_budget_ == 0;
  // The prompt's tail, so repeat penalties see it (as llama-server does).
  if (!HasPenalties(p)) return;
  const size_t n = p.repeat_last_n < 0 ? prompt.size() : std::min(prompt.size(), static_cast<size_t>(p.repeat_last_n));
  for (size_t i = prompt.size() - n; i < prompt.size(); ++i) llama_sampler_accept(chain_.get(), prompt[i]);
}

void SeqSampler::FillCandidates(const float* logits) {
  cur_.resize(static_cast<size_t>(n_vocab_));
  for (int32_t i = 0; i < n_vocab_; ++i) cur_[static_cast<size_t>(i)] = {i, logits[i], 0.0f};
}

llama_token SeqSampler::Sample(llama_context* ctx, int32_t idx) {
  if (forcing_) return ForceClose();
  const float* logits = llama_get_logits_ith(ctx, idx);
  const bool constrain = constrained();
  if (greedy_ && !grammar_) {
    const llama_token tok = ArgmaxToken(logits, n_vocab_);
    TrackThinking(tok);
    return tok;
  }

  llama_token tok;
  if (greedy_) {
    tok = ArgmaxToken(logits, n_vocab_);
  } else {
    FillCandidates(logits);
    llama_token_data_array arr{cur_.data(), cur_.size(), -1, false};
    llama_sampler_apply(chain_.get(), &arr);
    tok = arr.data[arr.selected].id;
  }
  if (constrain && !GrammarAllows(tok)) tok = greedy_ || temp0_ ? ConstrainedArgmax(logits) : ConstrainedSample(logits);
  if (constrain) llama_sampler_accept(grammar_.get(), tok);
  if (!greedy_) llama_sampler_accept(chain_.get(), tok);
  if (scan_) Watch(tok);
  TrackThinking(tok);
  return tok;
}

void SeqSampler::TrackThinking(llama_token tok) {
  if (think_budget_ < 0 || think_ == Think::After) return;
  if (think_ == Think::Before) {
    // Only an output that starts with think_open_ thinks.
    if (tok != think_open_[think_match_]) { think_ = Think::After; return; }
    if (++think_match_ < think_open_.size()) return;
    think_ = Think::Inside;
    think_match_ = 0;
    forcing_ = think_budget_ == 0;
    return;
  }
  ++think_count_;
  if (tok == think_close_[think_match_]) {
    if (++think_match_ == think_close_.size()) { think_ = Think::After; return; }
  } else {
    think_match_ = tok == think_close_[0] ? 1 : 0;
  }
  // A grammar that constrains the output decides alone (a forced token could break it).
  if (think_count_ >= think_budget_ && !constrained()) forcing_ = true;
}

llama_token SeqSampler::ForceClose() {
  const llama_token tok = think_close_[think_match_++];
  if (think_match_ == think_close_.size()) { forcing_ = false; think_ = Think::After; }
  if (!greedy_) llama_sampler_accept(chain_.get(), tok);
  if (scan_) Watch(tok);
  return tok;
}

void SeqSampler::Watch(llama_token tok) {
  // The piece as llama's grammar reads it: special tokens as their text.
  int32_t n = llama_token_to_piece(vocab_, tok, piece_.data(), static_cast<int32_t>(piece_.size()), 0, true);
  if (n < 0) {
    piece_.resize(static_cast<size_t>(-n));
    n = llama_token_to_piece(vocab_, tok, piece_.data(), static_cast<int32_t>(piece_.size()), 0, true);
  }
  if (!scan_->Push(tok, std::string(piece_.data(), static_cast<size_t>(std::max(n, 0))))) return;
  // The trigger came: the grammar reads the tokens holding it and starts at its first character.
  try {
    for (llama_token t : scan_->Opened()) llama_sampler_accept(grammar_.get(), t);
  } catch (const std::exception&) {
    // What followed the trigger in its own token cannot start the grammar (a model that writes
    // "<tool_call>{" where the call's format wants a newline): the rest stays free text.
    grammar_.reset();
  }
  scan_.reset();
}

bool SeqSampler::GrammarAllows(llama_token tok) {
  llama_token_data one{tok, 1.0f, 0.0f};
  llama_token_data_array single{&one, 1, -1, false};
  llama_sampler_apply(grammar_.get(), &single);
  return !(std::isinf(single.data[0].logit) && single.data[0].logit < 0);
}

llama_token SeqSampler::ConstrainedArgmax(const float* logits) {
  // Temperature 0: the best allowed token. The logits the chain would compare (bias and penalties
  // applied) are in cur_ when the chain ran, else the raw ones.
  if (greedy_) FillCandidates(logits);
  // The grammar checks the most likely tokens first, in widening windows: the first allowed token
  // in logit order is the best allowed one overall, and checking every token's text costs ~20x a
  // window of 8K. Windows are sorted as they are reached; ties keep the lowest id, as argmax.
  auto better = [](const llama_token_data& a, const llama_token_data& b) {
    return a.logit != b.logit ? a.logit > b.logit : a.id < b.id;
  };
  size_t from = 0;
  for (size_t window : {size_t{256}, size_t{8192}, cur_.size()}) {
    const size_t to = std::min(window, cur_.size());
    if (to <= from) continue;
    // Select the window (linear), then sort only it.
    const auto first = cur_.begin() + static_cast<std::ptrdiff_t>(from), last = cur_.begin() + static_cast<std::ptrdiff_t>(to);
    if (last != cur_.end()) std::nth_element(first, last - 1, cur_.end(), better);
    std::sort(first, last, better);
    llama_token_data_array arr{cur_.data() + from, to - from, -1, false};
    llama_sampler_apply(grammar_.get(), &arr);
    for (size_t i = 0; i < arr.size; ++i) {
      if (!(std::isinf(arr.data[i].logit) && arr.data[i].logit < 0)) return arr.data[i].id;
    }
    from = to;
  }
  throw std::runtime_error("the grammar allows no token here");
}

llama_token SeqSampler::ConstrainedSample(const float* logits) {
  // Sampling at a temperature needs the whole constrained distribution.
  FillCandidates(logits);
  llama_token_data_array arr{cur_.data(), cur_.size(), -1, false};
  llama_sampler_apply(grammar_.get(), &arr);
  llama_sampler_apply(chain_.get(), &arr);
  return arr.data[arr.selected].id;
}

}  // namespace strata
