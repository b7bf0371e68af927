#include "draft_ngram.h"

#include <algorithm>

namespace strata {

std::vector<llama_token> NgramDraft(const std::vector<llama_token>& held, const std::vector<llama_token>& tail,
                                    int32_t n_min, int32_t n_max, int32_t max) {
  std::vector<llama_token> out;
  if (max <= 0 || n_min <= 0 || tail.empty()) return out;
  const size_t len = held.size() + tail.size();
  auto at = [&](size_t i) { return i < held.size() ? held[i] : tail[i - held.size()]; };
  for (int32_t n = std::min<int32_t>(n_max, static_cast<int32_t>(len) - 1); n >= n_min; --n) {
    const size_t suffix = len - static_cast<size_t>(n);  // the suffix starts here
    // Latest earlier occurrence first: the freshest context is the likeliest to repeat.
    for (size_t start = suffix; start-- > 0;) {
      bool match = true;
      for (size_t k = 0; k < static_cast<size_t>(n) && match; ++k) match = at(start + k) == at(suffix + k);
      if (!match) continue;
      for (size_t i = start + static_cast<size_t>(n); i < len && out.size() < static_cast<size_t>(max); ++i) out.push_back(at(i));
      return out;
    }
  }
  return out;
}

}  // namespace strata
