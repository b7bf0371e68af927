// Turns token pieces into text that is safe to emit: whole UTF-8 characters only, and no
// text that might be the start of a stop string. Engine thread only (one per request).
#pragma once
#include <string>
#include <vector>

namespace strata {

class TextStream {
 public:
  void Reset(std::vector<std::string> stops);

  // Appends one token's bytes. Appends the text that can be released now to `out`.
  // Returns true when a stop string completed: `out` then ends just before it, and the
  // stream is finished (the stop string and anything after it are dropped).
  bool Push(const char* piece, size_t n, std::string& out);

  // Releases everything still withheld (a partial stop match, an incomplete character).
  std::string Flush();

  // The stop string that ended the stream ("" while none did).
  const std::string& matched() const { return matched_; }

 private:
  std::vector<std::string> stops_;
  std::string pending_;   // bytes not yet released
  bool stopped_ = false;
  std::string matched_;
};

// Bytes at the end of `s` that begin an incomplete UTF-8 sequence (0..3).
size_t IncompleteUtf8Tail(const std::string& s);

}  // namespace strata
