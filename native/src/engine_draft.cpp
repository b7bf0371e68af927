// Speculative drafts, planned before each step's batch: a decoding sequence with a predicted
// output drafts the prediction's next tokens (while its answer follows the prediction) and its own
// n-grams where that draft stops short or the answer has left the prediction; otherwise it guesses
// its next tokens from its own n-grams (prompt lookup, or llama.cpp's n-gram drafter of the
// configured kind) or, where that finds nothing, from the
// draft model, which drafts for every such sequence at once. The drafts are verified in the
// target's batch. Engine thread only.
#include <algorithm>
#include <chrono>

#include "draft_ngram.h"
#include "engine.h"

namespace strata {

namespace {

// Prediction draft tokens per step unless the request sets draftMax: a prediction is usually
// right for long runs (an edit repeats most of its region), so drafts are longer than a guess's.
constexpr int32_t kPredictionDraftMax = 32;

// Feeds the cursor the answer tokens it has not read: the answer is the last generated - 1 held
// tokens, then `pending` (sampled, not yet in the KV).
void FollowAnswer(PredictionCursor& c, const std::vector<llama_token>& held, llama_token pending, int32_t generated) {
  const size_t g = static_cast<size_t>(std::max(generated, 0));
  if (g == 0 || held.size() + 1 < g) return;
  const size_t first = held.size() - (g - 1);
  for (size_t i = c.followed(); i < g; ++i) c.Follow(i + 1 == g ? pending : held[first + i]);
}

}  // namespace

int32_t Engine::DraftCap(const Slot& s, int32_t k) const {
  const Active& a = *s.run;
  k = std::min(k, a.req.max_tokens - a.stats.generated - 1);  // drafts + 1 more fit the budget
  k = std::min(k, ctx_per_slot_ - 1 - static_cast<int32_t>(s.held.size()));  // and the context
  return std::min(k, rollback_max_);  // and what the KV can take back
}

void Engine::PrepareDrafts() {
  const SpeculativeConfig& sp = cfg_.spec;
  // A request's own say on n-gram drafts, else the engine's.
  const auto ngram_for = [&sp](const Active& a) { return a.req.ngram >= 0 ? a.req.ngram == 1 : sp.ngram; };
  const bool asked = std::any_of(slots_.begin(), slots_.end(), [&](const Slot& s) {
    return s.run && (!s.run->req.prediction.empty() || ngram_for(*s.run));
  });
  if (!draft_ && !asked) return;
  int32_t decoders = 0;
  bool prompts = false;
  for (const Slot& s : slots_) {
    if (!s.run) continue;
    if (s.run->decoding) ++decoders;
    else if (!s.run->forking) prompts = true;
  }
  // Drafts never crowd out what is certain: every decoder's token, and a prompt's share.
  int32_t room = cfg_.batch - decoders - (prompts ? info_.decode_prompt_budget : 0);
  std::vector<DraftJob> jobs;
  std::vector<Slot*> job_slots;
  for (Slot& s : slots_) {
    Active* a = s.run.get();
    if (!a) continue;
    a->draft.clear();
    a->draft_predicted = 0;
    if (!a->decoding) {
      // The draft model reads what the target read, a step behind, so drafting never waits on it.
      if (draft_ && !a->forking && a->n_read > 0 && a->req.images.empty()) {
        jobs.push_back({s.id, &s.held, -1, 0, {}});
        job_slots.push_back(&s);
      }
      continue;
    }
    const bool predicted = !a->req.prediction.empty();
    int32_t k = a->req.draft_max >= 0 ? a->req.draft_max : predicted ? kPredictionDraftMax : sp.draft_max;
    k = std::min(DraftCap(s, k), room);
    if (k <= 0) continue;
    if (predicted) {
      if (!a->prediction) a->prediction = std::make_unique<PredictionCursor>(a->req.prediction);
      FollowAnswer(*a->prediction, s.held, a->pending, a->stats.generated);
      const int32_t guess_k = std::min(k, a->req.draft_max >= 0 ? a->req.draft_max : sp.draft_max);
      // The prediction's tokens, then the sequence's own n-grams, whatever spec.ngram says: a
      // guess that misses costs only its verification.
      const CombinedDraftLimits lim{k, guess_k, sp.draft_min, sp.ngram_min, sp.ngram_max};
      a->draft = CombinedDraft(*a->prediction, s.held, a->pending, lim, a->draft_predicted);
      if (!a->draft.empty()) {
        room -= static_cast<int32_t>(a->draft.size());
        continue;
      }
      k = guess_k;  // neither the prediction nor the sequence's n-grams: the draft model, if any
    }
    const bool ngram = ngram_for(*a);
    if (k < sp.draft_min || (!ngram && !draft_)) continue;
    if (ngram) {
      if (ngram_) {
        if (!a->ngram_begun) ngram_->Begin(s.id, s.held);
        a->ngram_begun = true;
        a->draft = ngram_->Draft(s.id, s.held, a->pending, k);
      } else {
        a->draft = NgramDraft(s.held, a->pending, sp.ngram_min, sp.ngram_max, k);
      }
      if (static_cast<int32_t>(a->draft.size()) < sp.draft_min) a->draft.clear();
    }
    if (a->draft.empty() && draft_) {
      jobs.push_back({s.id, &s.held, a->pending, k, {}});
      job_slots.push_back(&s);
      room -= k;
    } else {
      room -= static_cast<int32_t>(a->draft.size());
    }
  }
  if (jobs.empty()) return;
  const auto t0 = std::chrono::steady_clock::now();
  draft_->Draft(jobs);  // a failed draft decode leaves the jobs without drafts: decoding goes on
  draft_ms_ += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  for (size_t i = 0; i < jobs.size(); ++i) {
    if (jobs[i].max == 0) continue;
    if (static_cast<int32_t>(jobs[i].out.size()) >= sp.draft_min) job_slots[i]->run->draft = std::move(jobs[i].out);
  }
}

}  // namespace strata
