// llama.cpp's own n-gram drafters (common_speculative's ngram-simple, ngram-map-k, ngram-map-k4v,
// ngram-mod and ngram-cache), for the sequences that draft from their own tokens when
// speculative.ngramKind names one of them instead of Strata's prompt lookup (draft_ngram.h). Each
// sequence keeps llama.cpp's state for it (a map of its n-grams, counts of its hits), begun again
// for every request. Engine thread only.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "llama.h"

struct common_speculative;

namespace strata {

// "lookup" (Strata's prompt lookup), "simple", "map-k", "map-k4v", "mod", "cache" (llama.cpp's
// ngram-* kinds of the same names). True when `name` is one of them.
bool IsNgramKind(const std::string& name);

class LlamaNgramDrafter {
 public:
  // `kind` one of llama.cpp's (not "lookup"), for sequences 0 .. n_seq-1: llama.cpp's default key
  // sizes (those of llama-server's --spec-type), drafts (its m-grams) of at most `draft_max` tokens.
  LlamaNgramDrafter(const std::string& kind, int32_t n_seq, int32_t draft_max);
  ~LlamaNgramDrafter();
  LlamaNgramDrafter(const LlamaNgramDrafter&) = delete;
  LlamaNgramDrafter& operator=(const LlamaNgramDrafter&) = delete;

  // Starts a sequence's state over from `tokens` (a new request in its slot).
  void Begin(int32_t seq, const std::vector<llama_token>& tokens);
  // Up to `max` tokens after `held` then `last`; empty when the kind finds none.
  std::vector<llama_token> Draft(int32_t seq, const std::vector<llama_token>& held, llama_token last, int32_t max);
  // How many tokens of the sequence's last draft the model kept.
  void Accept(int32_t seq, int32_t accepted);

 private:
  common_speculative* spec_ = nullptr;
  int32_t n_seq_;
  std::vector<bool> drafted_;  // per seq: its last Draft gave tokens (Accept then has one to follow)
  std::vector<size_t> seen_;   // per seq: the tokens it last drafted after (fewer now: begun again)
};

}  // namespace strata
