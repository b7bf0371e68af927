#include "draft_prediction.h"

#include <algorithm>

#include "draft_ngram.h"

namespace strata {

namespace {

// Longest suffix of the answer tried when rejoining the prediction. Longest first: a longer
// match is less likely to be a common token (a newline, a bracket) in the wrong place.
constexpr size_t kRejoinMax = 8;
// The draft's length adapts: it doubles each time the answer follows it that far and halves at a
// mismatch, so a prediction that is right costs few steps, one edit costs little, and a prediction
// that keeps missing (or guessed rejoins) costs little verification.
constexpr size_t kLimitMin = 2, kLimitMax = 256;

}  // namespace

void PredictionCursor::Disagree(size_t at, llama_token predicted, llama_token guessed) {
  disagree_at_ = answer_.size() + at;
  disagree_predicted_ = predicted;
  disagree_guessed_ = guessed;
}

void PredictionCursor::Follow(llama_token tok) {
  if (disagree_at_ == answer_.size()) {
    if (tok == disagree_guessed_) ngrams_trusted_ = true;
    if (tok == disagree_predicted_) ngrams_trusted_ = false;
    disagree_at_ = npos;
  }
  answer_.push_back(tok);
  if (at_ != npos && at_ < tokens_.size() && tokens_[at_] == tok) {
    hint_ = ++at_;
    if (++good_ >= limit_) {
      limit_ = std::min(2 * limit_, kLimitMax);
      good_ = 0;
    }
    return;
  }
  limit_ = std::max(limit_ / 2, kLimitMin);
  good_ = 0;
  Resync();
}

void PredictionCursor::Resync() {
  at_ = npos;
  const size_t len = answer_.size();
  for (size_t m = std::min({kRejoinMax, len, tokens_.size()}); m >= 1; --m) {
    const llama_token* suffix = answer_.data() + (len - m);
    size_t before = npos;  // the latest match ending before the hint
    for (size_t start = 0; start + m <= tokens_.size(); ++start) {
      if (!std::equal(suffix, suffix + m, tokens_.begin() + static_cast<std::ptrdiff_t>(start))) continue;
      const size_t end = start + m;
      // The first match that ends past the hint: where the edit's unchanged rest begins.
      if (end > hint_) {
        at_ = end;
        return;
      }
      before = end;
    }
    if (before != npos) {
      at_ = before;
      return;
    }
  }
  // Nowhere to rejoin: guess once per position that the answer replaced the expected token and
  // goes on with the one after it (a renamed word, a changed number).
  if (guess_from_ != hint_ && hint_ + 1 < tokens_.size()) {
    guess_from_ = hint_;
    at_ = hint_ + 1;
  }
}

std::vector<llama_token> PredictionCursor::Next(int32_t max) const {
  if (at_ == npos || at_ >= tokens_.size() || max <= 0) return {};
  const size_t n = std::min({tokens_.size() - at_, static_cast<size_t>(max), limit_});
  return std::vector<llama_token>(tokens_.begin() + static_cast<std::ptrdiff_t>(at_),
                                  tokens_.begin() + static_cast<std::ptrdiff_t>(at_ + n));
}

std::vector<llama_token> CombinedDraft(PredictionCursor& c, const std::vector<llama_token>& held, llama_token pending,
                                       const CombinedDraftLimits& lim, int32_t& predicted) {
  std::vector<llama_token> draft = c.Next(lim.max);
  predicted = static_cast<int32_t>(draft.size());
  if (!draft.empty() && lim.guess_max > 0) {
    // The n-grams' guess for the same tokens: where it disagrees, one of the two is wrong.
    std::vector<llama_token> guess = NgramDraft(held, pending, lim.ngram_min, lim.ngram_max, lim.max);
    size_t j = 0;
    while (j < guess.size() && j < draft.size() && guess[j] == draft[j]) ++j;
    if (j < guess.size() && j < draft.size()) {
      c.Disagree(j, draft[j], guess[j]);
      if (c.NgramsTrusted()) {
        predicted = static_cast<int32_t>(j);
        return guess;
      }
    }
  }
  const int32_t want = std::min(lim.max, predicted + lim.guess_max);
  if (predicted >= want) return draft;
  std::vector<llama_token> tail{pending};
  tail.insert(tail.end(), draft.begin(), draft.end());
  const std::vector<llama_token> guess = NgramDraft(held, tail, lim.ngram_min, lim.ngram_max, want - predicted);
  if (predicted == 0 && static_cast<int32_t>(guess.size()) < lim.guess_min) return draft;
  draft.insert(draft.end(), guess.begin(), guess.end());
  return draft;
}

}  // namespace strata
