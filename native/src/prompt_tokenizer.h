// Tokenizing a prompt written partly by a chat template and partly by a client. The template's
// markup is tokenized with special-token parsing (its <|im_start|> is the control token); text
// a client supplied never is (a <|im_start|> typed in a message stays text), so nobody can close
// a turn or open a fake one from inside a message. JS thread only (reads the vocabulary).
#pragma once
#include <string>
#include <vector>

#include "llama.h"

namespace strata {

// A piece of the prompt; `plain` pieces came from a client.
struct PromptSegment {
  std::string text;
  bool plain = false;
};

// Texts of the control and unknown tokens: what special-token parsing turns into one token (and
// what must not be parsed in client text). User-defined tokens are not listed: llama.cpp (like
// Hugging Face tokenizers) matches those in any text.
std::vector<std::string> ControlTokenTexts(const llama_vocab* vocab);

// The vocabulary's special tokens in the order llama.cpp's tokenizer partitions text by them.
class PromptTokenizer {
 public:
  explicit PromptTokenizer(const llama_vocab* vocab);

  // The concatenated segments tokenized as llama_tokenize(text, add_special, parse_special=true)
  // would, except that a control or unknown token's text overlapping a plain segment stays text.
  // No plain segment: exactly llama_tokenize(..., true). Only plain segments: llama_tokenize(..., false).
  std::vector<llama_token> Tokenize(const std::vector<PromptSegment>& segments, bool add_special) const;

 private:
  struct Special {
    llama_token id;
    std::string text;
    bool always;  // user-defined: matched even in plain text
    bool lstrip, rstrip;
  };
  const llama_vocab* vocab_;
  std::vector<Special> specials_;
};

}  // namespace strata
