// Lazy grammars: a sequence's output is free text until the model opens what the grammar describes
// (a tool call's opener such as "<tool_call>"), and constrained from that opener's first character
// on. TriggerScan finds the opener in the output as it streams, in constant work per token (a
// window as long as the longest trigger, not the whole output llama's own lazy sampler searches
// with a regex at every token), and knows a leading thinking block, inside which nothing triggers.
// Engine thread only (one per sequence).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "llama.h"

namespace strata {

struct GrammarTriggers {
  // Texts that open the grammar anywhere in the answer.
  std::vector<std::string> words;
  // Texts that open it only where the answer starts (after whitespace), e.g. a bare JSON call.
  std::vector<std::string> at_start;
  // A thinking block: `think_inside` when the prompt already opened it, else only when the output
  // starts with `think_open`; the answer (and the triggers) begin after `think_close`. Empty
  // `think_close`: no thinking.
  std::string think_open;
  std::string think_close;
  bool think_inside = false;
};

// The patterns llama's lazy grammar sampler is built with: each trigger as a literal regex.
std::vector<std::string> TriggerPatterns(const GrammarTriggers& t);

class TriggerScan {
 public:
  explicit TriggerScan(const GrammarTriggers& t);

  // Feeds one emitted token and its text (special tokens as their text). True when a trigger
  // completed with it: then Opened() holds the tokens from the one where the trigger starts on,
  // to hand to the grammar (which finds the trigger in their text and starts there).
  bool Push(llama_token tok, const std::string& piece);
  bool fired() const { return mode_ == Mode::Fired; }
  const std::vector<llama_token>& Opened() const { return opened_; }

 private:
  enum class Mode { Lead, Think, Answer, Fired };
  void Scan();
  void Fire(size_t at);
  void Trim(size_t keep_from);

  const GrammarTriggers t_;
  size_t longest_ = 0;
  Mode mode_;
  std::string text_;                      // the output from absolute offset base_ on
  size_t base_ = 0;
  std::vector<std::pair<llama_token, size_t>> toks_;  // tokens overlapping text_, with their start
  size_t answer_at_ = 0;                  // where the answer starts (absolute)
  bool start_open_ = true;                // an at_start trigger may still come
  std::vector<llama_token> opened_;
};

}  // namespace strata
