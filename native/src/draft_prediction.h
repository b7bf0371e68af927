// Predicted outputs (OpenAI's `prediction`): the caller's guess at the answer (an edit's region as
// it stands) is the speculative draft. The cursor follows the answer through the prediction; after
// a mismatch it resynchronises where the answer's latest tokens occur in the prediction again
// (an edit that changed one line rejoins the old text where that line ends). Engine thread only.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "llama.h"

namespace strata {

class PredictionCursor {
 public:
  explicit PredictionCursor(std::vector<llama_token> tokens) : tokens_(std::move(tokens)) {}

  // The answer grew by `tok` (answer tokens arrive in order, each once).
  void Follow(llama_token tok);
  // Answer tokens followed so far.
  size_t followed() const { return answer_.size(); }
  // The prediction's tokens expected after the answer so far, at most `max`; empty while lost or
  // when the prediction is used up.
  std::vector<llama_token> Next(int32_t max) const;

  // Where the prediction and the sequence's own n-grams disagree, which one the answer followed
  // there last time (the prediction until an answer says otherwise): an edit whose prediction
  // changed lines the answer keeps (or the other way round) shows it at the first such line.
  bool NgramsTrusted() const { return ngrams_trusted_; }
  // This draft's token `at` (0: the one after the answer so far) is `predicted` in the prediction
  // and `guessed` in the n-grams: the answer's token there settles which one to trust.
  void Disagree(size_t at, llama_token predicted, llama_token guessed);

 private:
  void Resync();

  std::vector<llama_token> tokens_;
  std::vector<llama_token> answer_;
  // Index in tokens_ of the token expected next; npos while the answer has left the prediction.
  static constexpr size_t npos = static_cast<size_t>(-1);
  size_t at_ = 0;
  // Just past the prediction token the answer last followed: a rejoin after it is preferred (an
  // unconfirmed rejoin does not move it, so one wrong guess does not skip the real one).
  size_t hint_ = 0;
  // The hint_ a replaced-token guess was last made at (see Resync): one guess per position.
  size_t guess_from_ = npos;
  // Draft length now, and answer tokens that followed the prediction since it last changed.
  size_t limit_ = 16;  // a first draft of 16, then as above
  size_t good_ = 0;
  bool ngrams_trusted_ = false;
  // The pending disagreement (Disagree): the answer's index it is at, npos for none.
  size_t disagree_at_ = npos;
  llama_token disagree_predicted_ = -1, disagree_guessed_ = -1;
};

// Bounds of a prediction's combined draft (CombinedDraft).
struct CombinedDraftLimits {
  int32_t max = 0;        // draft tokens in all
  int32_t guess_max = 0;  // of which n-gram guesses
  int32_t guess_min = 1;  // a guess alone shorter than this is no draft
  int32_t ngram_min = 2, ngram_max = 4;
};

// A sequence with a prediction drafts the prediction's next tokens, and where that draft stops
// short (its adaptive length after a miss, the prediction's end) or the answer has left the
// prediction, it goes on with its own n-grams: for an edit the prompt holds the text around the
// region, which the answer repeats where it differs from the prediction (the old text of a line
// the prediction changed). Where the prediction's draft and the n-grams' guess for the same tokens
// disagree, the draft follows the one the answer followed at the last disagreement (the cursor
// learns it). The sequence is `held` then `pending`. `predicted` is set to how many of the draft's
// first tokens are the prediction's; the rest are n-gram guesses.
std::vector<llama_token> CombinedDraft(PredictionCursor& c, const std::vector<llama_token>& held, llama_token pending,
                                       const CombinedDraftLimits& lim, int32_t& predicted);

}  // namespace strata
