// Sampling after a decode: each sequence samples its next token; with a draft in the batch it
// keeps every draft token the target samples itself (exact for any sampler: a draft token counts
// only where the target drew that same token) and one more. Emitting applies the stop rules and
// records log-probabilities. Engine thread only.
#include <algorithm>
#include <chrono>
#include <exception>

#include "engine.h"

namespace strata {

namespace {

double MsSince(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

std::string Engine::Piece(llama_token tok, bool special) {
  int32_t n = llama_token_to_piece(vocab_, tok, piece_.data(), static_cast<int32_t>(piece_.size()), 0, special);
  if (n < 0) {
    piece_.resize(static_cast<size_t>(-n));
    n = llama_token_to_piece(vocab_, tok, piece_.data(), static_cast<int32_t>(piece_.size()), 0, special);
  }
  return std::string(piece_.data(), static_cast<size_t>(std::max(n, 0)));
}

void Engine::SampleAndEmit(Slot& s) {
  Active& a = *s.run;
  const std::vector<llama_token> draft = std::move(a.draft);
  a.draft.clear();
  const int32_t base = a.logits_at;
  a.logits_at = -1;  // sampled: a later visit in this step must not sample again
  // KV positions this step wrote for the sequence: up to held (pending included) + the draft.
  const size_t kv_end = s.held.size() + draft.size();
  a.stats.drafted += static_cast<int32_t>(draft.size());
  step_drafted_ += static_cast<int32_t>(draft.size());
  a.stats.predicted += std::min(a.draft_predicted, static_cast<int32_t>(draft.size()));
  int32_t kept = 0;  // draft tokens the target sampled itself
  for (size_t j = 0;; ++j) {
    const auto t0 = std::chrono::steady_clock::now();
    llama_token tok;
    try {
      tok = a.sampler->Sample(ctx_.get(), base + static_cast<int32_t>(j));
    } catch (const std::exception& e) {
      sample_ms_ += MsSince(t0);
      llama_memory_seq_rm(mem_, s.id, static_cast<llama_pos>(s.held.size()), -1);
      FinishRequest(a.req.key, FinishReason::Error, std::string("sampling failed: ") + e.what());
      return;
    }
    sample_ms_ += MsSince(t0);
    const bool agreed = j < draft.size() && tok == draft[j];
    if (agreed && static_cast<int32_t>(j) < a.draft_predicted) a.stats.predicted_accepted++;
    if (!EmitToken(s, tok, base + static_cast<int32_t>(j))) break;  // ended: s.run is gone
    if (agreed) {
      s.held.push_back(tok);  // decoded as a draft token: its KV is in place
      ++kept;
      a.stats.accepted++;
      step_accepted_++;
      continue;
    }
    if (s.held.size() >= static_cast<size_t>(ctx_per_slot_)) {
      // No room left for the next token's position.
      Finish(s, FinishReason::Length);
    } else {
      a.pending = tok;
    }
    break;
  }
  if (!draft.empty()) {
    // Acceptance per draft position: position i counts as accepted when the first i+1 were.
    if (totals_.drafted_at.size() < draft.size()) {
      totals_.drafted_at.resize(draft.size(), 0);
      totals_.accepted_at.resize(draft.size(), 0);
    }
    for (size_t i = 0; i < draft.size(); ++i) totals_.drafted_at[i]++;
    for (int32_t i = 0; i < kept; ++i) totals_.accepted_at[static_cast<size_t>(i)]++;
  }
  // The head goes on from the hidden state of the last token kept.
  if (head_ && !draft.empty()) head_->Accept(s.id, kept);
  if (ngram_ && !draft.empty()) ngram_->Accept(s.id, kept);
  // Rejected (or never reached) draft tokens leave the KV, which then matches `held` again.
  if (s.held.size() < kv_end) llama_memory_seq_rm(mem_, s.id, static_cast<llama_pos>(s.held.size()), -1);
}

bool Engine::EmitToken(Slot& s, llama_token tok, int32_t logits_idx) {
  Active& a = *s.run;
  const bool eog = !a.req.ignore_eos && llama_vocab_is_eog(vocab_, tok);
  if (eog || std::find(a.req.stop_tokens.begin(), a.req.stop_tokens.end(), tok) != a.req.stop_tokens.end()) {
    Finish(s, FinishReason::Stop);
    return false;
  }
  const auto t1 = std::chrono::steady_clock::now();
  a.stats.generated++;
  if (a.trace.first_token < 0) a.trace.first_token = NowMs();

  // Special tokens render as "" unless the request asked for their text (renderTokens).
  const bool special = !a.req.render_tokens.empty() &&
      std::find(a.req.render_tokens.begin(), a.req.render_tokens.end(), tok) != a.req.render_tokens.end();
  const std::string piece = Piece(tok, special);
  if (a.event < 0) {
    a.event = static_cast<int32_t>(msg_->events.size());
    NewEvent(EventType::Tokens, a.req.id).choice = a.choice;
  }
  EngineEvent& e = msg_->events[static_cast<size_t>(a.event)];
  e.ids.push_back(tok);
  if (a.req.logprobs >= 0) {
    TokenLogprob lp = LogprobsOf(llama_get_logits_ith(ctx_.get(), logits_idx), info_.vocab_size, tok, a.req.logprobs);
    lp.piece = piece;
    for (TokenLogprob& alt : lp.top) alt.piece = Piece(alt.id, true);
    e.logprobs.push_back(std::move(lp));
  }
  const bool stopped = a.text.Push(piece.data(), piece.size(), e.text);
  detok_ms_ += MsSince(t1);

  if (stopped) {
    Finish(s, FinishReason::Stop, "", true);
    return false;
  }
  if (a.stats.generated >= a.req.max_tokens) {
    Finish(s, FinishReason::Length);
    return false;
  }
  return true;
}

}  // namespace strata
