// The special-token partition mirrors llama.cpp's tokenizer_st_partition (src/llama-vocab.cpp):
// the same tokens (control, user-defined, unknown) in the same order (longest text first, the
// same sort), leftmost matches, lstrip/rstrip attributes. The one difference: a control or
// unknown match that overlaps a plain segment is skipped. Text between tokens is then tokenized
// by llama_tokenize without special parsing, as llama.cpp tokenizes each raw fragment (an SPM
// vocabulary's space prefix after a token included).
#include "prompt_tokenizer.h"

#include <algorithm>
#include <cctype>
#include <list>
#include <stdexcept>
#include <utility>

namespace strata {

namespace {

constexpr int kPartitioned = LLAMA_TOKEN_ATTR_CONTROL | LLAMA_TOKEN_ATTR_USER_DEFINED | LLAMA_TOKEN_ATTR_UNKNOWN;

struct Fragment {
  bool is_token = false;
  llama_token token = LLAMA_TOKEN_NULL;
  size_t offset = 0, length = 0;  // raw text: a range of the whole prompt
};

void AppendPlain(const llama_vocab* vocab, const std::string& text, std::vector<llama_token>& out) {
  if (text.empty()) return;
  std::vector<llama_token> buf(text.size() + 8);
  int32_t n = llama_tokenize(vocab, text.data(), static_cast<int32_t>(text.size()), buf.data(),
                             static_cast<int32_t>(buf.size()), false, false);
  if (n < 0) {
    if (n == INT32_MIN) throw std::length_error("text is too long to tokenize");
    buf.resize(static_cast<size_t>(-n));
    n = llama_tokenize(vocab, text.data(), static_cast<int32_t>(text.size()), buf.data(),
                       static_cast<int32_t>(buf.size()), false, false);
  }
  out.insert(out.end(), buf.begin(), buf.begin() + std::max(n, 0));
}

}  // namespace

std::vector<std::string> ControlTokenTexts(const llama_vocab* vocab) {
  std::vector<std::string> out;
  const int32_t n = llama_vocab_n_tokens(vocab);
  for (llama_token id = 0; id < n; ++id) {
    if (!(llama_vocab_get_attr(vocab, id) & (LLAMA_TOKEN_ATTR_CONTROL | LLAMA_TOKEN_ATTR_UNKNOWN))) continue;
    const char* text = llama_vocab_get_text(vocab, id);
    if (text && *text) out.emplace_back(text);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

PromptTokenizer::PromptTokenizer(const llama_vocab* vocab) : vocab_(vocab) {
  std::vector<llama_token> ids;
  const int32_t n = llama_vocab_n_tokens(vocab);
  for (llama_token id = 0; id < n; ++id) {
    if (llama_vocab_get_attr(vocab, id) & kPartitioned) ids.push_back(id);
  }
  // The same sort as llama.cpp's special-token cache, over the same sequence: the same order.
  std::sort(ids.begin(), ids.end(), [vocab](llama_token a, llama_token b) {
    return std::char_traits<char>::length(llama_vocab_get_text(vocab, a)) >
           std::char_traits<char>::length(llama_vocab_get_text(vocab, b));
  });
  for (llama_token id : ids) {
    const int attr = llama_vocab_get_attr(vocab, id);
    const char* text = llama_vocab_get_text(vocab, id);
    if (!text || !*text) continue;
    specials_.push_back({id, text, (attr & LLAMA_TOKEN_ATTR_USER_DEFINED) != 0 && !(attr & (LLAMA_TOKEN_ATTR_CONTROL | LLAMA_TOKEN_ATTR_UNKNOWN)),
                         (attr & LLAMA_TOKEN_ATTR_LSTRIP) != 0, (attr & LLAMA_TOKEN_ATTR_RSTRIP) != 0});
  }
}

std::vector<llama_token> PromptTokenizer::Tokenize(const std::vector<PromptSegment>& segments, bool add_special) const {
  std::string text;
  std::vector<std::pair<size_t, size_t>> plain;  // [begin, end) byte ranges, in order
  for (const auto& s : segments) {
    if (s.plain && !s.text.empty()) plain.emplace_back(text.size(), text.size() + s.text.size());
    text += s.text;
  }
  auto overlaps_plain = [&plain](size_t begin, size_t end) {
    // The first plain range that ends after `begin`; it overlaps when it starts before `end`.
    auto it = std::upper_bound(plain.begin(), plain.end(), begin,
                               [](size_t b, const std::pair<size_t, size_t>& r) { return b < r.second; });
    return it != plain.end() && it->first < end;
  };

  std::list<Fragment> frags;
  if (!text.empty()) frags.push_back({false, LLAMA_TOKEN_NULL, 0, text.size()});
  for (const Special& sp : specials_) {
    for (auto it = frags.begin(); it != frags.end(); ++it) {
      if (it->is_token) continue;
      size_t base = it->offset, len = it->length, from = base;
      while (true) {
        const size_t end = base + len;
        size_t match = std::string_view(text.data(), end).find(sp.text, from);
        if (match == std::string_view::npos) break;
        if (!sp.always && overlaps_plain(match, match + sp.text.size())) {
          from = match + 1;  // client text: not a token here; look further on
          continue;
        }
        // Left of the match (lstrip: without its trailing whitespace), the token, then go on right.
        size_t left_len = match - base;
        if (sp.lstrip) while (left_len > 0 && std::isspace(static_cast<unsigned char>(text[base + left_len - 1]))) left_len--;
        if (left_len > 0) frags.insert(it, {false, LLAMA_TOKEN_NULL, base, left_len});
        frags.insert(it, {true, sp.id, 0, 0});
        size_t right = match + sp.text.size();
        if (sp.rstrip) while (right < end && std::isspace(static_cast<unsigned char>(text[right]))) right++;
        base = right;
        len = end - right;
        from = base;
        if (len == 0) break;
      }
      if (base == it->offset && len == it->length) continue;  // nothing matched in this fragment
      if (len > 0) {
        it->offset = base;
        it->length = len;
      } else {
        it = frags.erase(it);
        --it;
      }
    }
  }

  std::vector<llama_token> out;
  if (add_special && llama_vocab_get_add_bos(vocab_) && llama_vocab_bos(vocab_) != LLAMA_TOKEN_NULL) out.push_back(llama_vocab_bos(vocab_));
  for (const Fragment& f : frags) {
    if (f.is_token) out.push_back(f.token);
    else AppendPlain(vocab_, text.substr(f.offset, f.length), out);
  }
  if (add_special && llama_vocab_get_add_eos(vocab_) && llama_vocab_eos(vocab_) != LLAMA_TOKEN_NULL) out.push_back(llama_vocab_eos(vocab_));
  return out;
}

}  // namespace strata
