// Prompt-lookup drafting: a sequence that repeats itself (an edit that copies the file it was
// given, code that echoes a signature) is guessed from its own tokens. Pure function; any thread.
#pragma once
#include <cstdint>
#include <vector>

#include "llama.h"

namespace strata {

// The tokens that followed the latest earlier occurrence of the sequence's last n tokens (n from
// n_max down to n_min, longest match first), at most `max`. The sequence is `held` then `tail`
// (the pending token, then any draft already chosen, which the guess continues). Empty when
// nothing matches.
std::vector<llama_token> NgramDraft(const std::vector<llama_token>& held, const std::vector<llama_token>& tail,
                                    int32_t n_min, int32_t n_max, int32_t max);

// The same for the sequence `held` then `last`.
inline std::vector<llama_token> NgramDraft(const std::vector<llama_token>& held, llama_token last, int32_t n_min,
                                           int32_t n_max, int32_t max) {
  return NgramDraft(held, std::vector<llama_token>{last}, n_min, n_max, max);
}

}  // namespace strata
