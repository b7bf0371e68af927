// Unit test of a prediction's combined draft (draft_prediction.cpp with draft_ngram.cpp), built and
// run by test/unit/native-draft-prediction.test.ts against stub/llama.h. An edit's prompt holds the
// original region; the prediction changed one spot of it, the answer keeps the original there.
// Prints one line per failed check and exits 1 if any failed.
#include <cstdio>
#include <vector>

#include "../src/draft_ngram.h"
#include "../src/draft_prediction.h"

using strata::CombinedDraft;
using strata::CombinedDraftLimits;
using strata::NgramDraft;
using strata::PredictionCursor;
using Tokens = std::vector<llama_token>;

static int failures = 0;

static void Expect(const Tokens& got, const Tokens& want, const char* what) {
  if (got == want) return;
  std::printf("FAIL %s: got [", what);
  for (llama_token t : got) std::printf(" %d", t);
  std::printf(" ], want [");
  for (llama_token t : want) std::printf(" %d", t);
  std::printf(" ]\n");
  ++failures;
}

static void ExpectBool(bool got, bool want, const char* what) {
  if (got == want) return;
  std::printf("FAIL %s: got %d, want %d\n", what, got, want);
  ++failures;
}

static void Expect(long got, long want, const char* what) {
  if (got == want) return;
  std::printf("FAIL %s: got %ld, want %ld\n", what, got, want);
  ++failures;
}

// The prompt, the answer so far, and the cursor following the answer (as the engine feeds it).
struct Seq {
  explicit Seq(Tokens prompt, Tokens prediction) : held(std::move(prompt)), cursor(std::move(prediction)) {}
  Tokens held;
  llama_token pending = -1;
  PredictionCursor cursor;
  void Answer(const Tokens& toks) {
    for (llama_token t : toks) {
      if (pending >= 0) held.push_back(pending);
      pending = t;
      cursor.Follow(t);
    }
  }
  Tokens Draft(const CombinedDraftLimits& lim, int32_t& predicted) {
    return CombinedDraft(cursor, held, pending, lim, predicted);
  }
};

int main() {
  // The original region (in the prompt): the answer copies it. The prediction replaced 104 300 301
  // with 204, so the answer leaves the prediction at 104 and rejoins it at 105.
  const Tokens region = {100, 101, 102, 103, 104, 300, 301, 105, 106, 107, 108, 109, 110, 111, 112, 113};
  Tokens prompt = {50};
  prompt.insert(prompt.end(), region.begin(), region.end());
  prompt.push_back(51);
  const Tokens prediction = {100, 101, 102, 103, 204, 105, 106, 107, 108, 109, 110, 111};
  CombinedDraftLimits lim;
  lim.max = 6;
  lim.guess_max = 4;
  lim.guess_min = 1;
  lim.ngram_min = 2;
  lim.ngram_max = 4;
  int32_t predicted = -1;

  Seq s(prompt, prediction);
  s.Answer({100, 101});
  // The prediction and the prompt's n-grams disagree at 204 / 104: the prediction is drafted (it
  // is trusted until an answer says otherwise).
  Expect(s.Draft(lim, predicted), {102, 103, 204, 105, 106, 107}, "following: the prediction's tokens");
  Expect(predicted, 6, "following: all predicted");
  ExpectBool(s.cursor.NgramsTrusted(), false, "following: the prediction trusted");

  // 104 where the prediction has 204: the answer followed the n-grams there, which are trusted at
  // the next disagreement: the cursor guesses a replaced token (105 next), the n-grams say 300.
  Seq only = s;  // the prediction alone from here (no n-gram guesses)
  s.Answer({102, 103, 104});
  ExpectBool(s.cursor.NgramsTrusted(), true, "the answer followed the n-grams: they are trusted");
  Expect(s.Draft(lim, predicted), {300, 301, 105, 106, 107, 108}, "a disagreement: the trusted n-grams' tokens");
  Expect(predicted, 0, "a disagreement at the first token: nothing predicted");
  CombinedDraftLimits no_guess = lim;
  no_guess.guess_max = 0;
  only.Answer({102, 103, 104});
  Expect(only.Draft(no_guess, predicted), {105, 106, 107, 108, 109, 110}, "a replaced token: the prediction after it");
  Expect(predicted, 6, "a replaced token: predicted");

  // Where the answer follows the prediction at a disagreement, the prediction is trusted again.
  Seq back(prompt, prediction);
  back.Answer({100, 101});
  back.Draft(lim, predicted);
  back.Answer({102, 103, 104});
  back.Draft(lim, predicted);  // disagree at the first token: 300 (n-grams) or 105 (prediction)
  back.Answer({105});
  ExpectBool(back.cursor.NgramsTrusted(), false, "the answer followed the prediction: it is trusted again");
  Expect(back.Draft(lim, predicted), {106, 107, 108, 109, 110, 111}, "trusted again: the prediction's tokens");
  // 300 is in neither guess: the answer has left the prediction, its own n-grams (the prompt's
  // original region) draft what follows, at most guess_max.
  s.Answer({300});
  Expect(s.Draft(lim, predicted), {301, 105, 106, 107}, "left the prediction: the n-gram continuation");
  Expect(predicted, 0, "left the prediction: nothing predicted");
  s.Answer({301});
  Expect(s.Draft(lim, predicted), {105, 106, 107, 108}, "still left: the n-gram continuation");
  Expect(predicted, 0, "still left: nothing predicted");
  // Back on the prediction at 105: drafting resumes from it at once, for as many tokens as its
  // length after three misses allows (2), and the n-grams continue it.
  s.Answer({105});
  Expect(s.Draft(lim, predicted), {106, 107, 108, 109, 110, 111}, "rejoined: the prediction's tokens");
  Expect(predicted, 2, "rejoined: the first two predicted");
  // Near the prediction's end its draft is short: the n-grams continue it (the region goes on to 112 113).
  s.Answer({106, 107, 108, 109});
  Expect(s.Draft(lim, predicted), {110, 111, 112, 113, 51, 100}, "short prediction draft: continued by n-grams");
  Expect(predicted, 2, "short prediction draft: the first two predicted");
  Expect(s.Draft(no_guess, predicted), {110, 111}, "guess_max 0: the prediction alone");
  CombinedDraftLimits three = lim;
  three.max = 3;
  Expect(s.Draft(three, predicted), {110, 111, 112}, "max bounds the whole draft");

  // A guess alone shorter than guess_min is no draft; nothing matching is no draft.
  Seq lost({7, 8, 9}, {900, 901, 902});
  lost.Answer({7, 8});
  CombinedDraftLimits min4 = lim;
  min4.guess_min = 4;
  Expect(lost.Draft(lim, predicted), {9, 7, 8}, "lost: the n-gram continuation up to the sequence's end");
  Expect(predicted, 0, "lost: nothing predicted");
  Expect(lost.Draft(min4, predicted), {}, "lost: a guess shorter than guess_min");
  Seq none(prompt, {900, 901, 902});
  none.Answer({700, 701});
  Expect(none.Draft(lim, predicted), {}, "nothing matches: no draft");

  // NgramDraft over `held` then a tail equals the one over `held` then its last token.
  const Tokens held = {1, 2, 3, 4, 5, 1, 2};
  Expect(NgramDraft(held, Tokens{3}, 2, 4, 3), NgramDraft(held, 3, 2, 4, 3), "tail of one: the same guess");
  Expect(NgramDraft(held, Tokens{3}, 2, 4, 3), {4, 5, 1}, "the latest match's continuation");
  Expect(NgramDraft({1, 2, 3, 4, 5}, Tokens{1, 2, 3}, 2, 4, 4), {4, 5, 1, 2}, "a longer tail: matched past it");

  if (failures > 0) return 1;
  std::printf("draft_prediction: all checks passed\n");
  return 0;
}
