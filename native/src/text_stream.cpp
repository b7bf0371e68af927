#include "text_stream.h"

#include <algorithm>

namespace strata {

size_t IncompleteUtf8Tail(const std::string& s) {
  // Walk back over at most 3 continuation bytes to the lead byte of the last character.
  const size_t n = s.size();
  for (size_t back = 1; back <= 4 && back <= n; ++back) {
    const unsigned char c = static_cast<unsigned char>(s[n - back]);
    if ((c & 0xC0) == 0x80) continue;  // continuation byte
    size_t need = 1;
    if ((c & 0xE0) == 0xC0) need = 2;
    else if ((c & 0xF0) == 0xE0) need = 3;
    else if ((c & 0xF8) == 0xF0) need = 4;
    return need > back ? back : 0;
  }
  return 0;  // invalid run of continuation bytes: release as is
}

void TextStream::Reset(std::vector<std::string> stops) {
  stops_.clear();
  for (auto& s : stops) {
    if (!s.empty()) stops_.push_back(std::move(s));
  }
  pending_.clear();
  stopped_ = false;
  matched_.clear();
}

bool TextStream::Push(const char* piece, size_t n, std::string& out) {
  if (stopped_) return true;
  pending_.append(piece, n);
  const size_t complete = pending_.size() - IncompleteUtf8Tail(pending_);

  // Earliest full stop match within the complete text ends the stream.
  size_t first = std::string::npos;
  for (const auto& s : stops_) {
    const size_t at = pending_.find(s);
    if (at != std::string::npos && at + s.size() <= complete && at < first) {
      first = at;
      matched_ = s;
    }
  }
  if (first != std::string::npos) {
    out.append(pending_, 0, first);
    pending_.clear();
    stopped_ = true;
    return true;
  }

  // Withhold the longest tail that is a proper prefix of some stop string.
  size_t hold = 0;
  for (const auto& s : stops_) {
    const size_t max_k = std::min(s.size() - 1, complete);
    for (size_t k = max_k; k > hold; --k) {
      if (pending_.compare(complete - k, k, s, 0, k) == 0) {
        hold = k;
        break;
      }
    }
  }
  const size_t release = complete - hold;
  out.append(pending_, 0, release);
  pending_.erase(0, release);
  return false;
}

std::string TextStream::Flush() {
  std::string rest;
  if (!stopped_) rest.swap(pending_);
  pending_.clear();
  return rest;
}

}  // namespace strata
