#include "grammar_trigger.h"

#include <algorithm>

namespace strata {

namespace {

// Longer than any leading whitespace or thinking opener worth waiting on: past it the answer has
// started, whatever it is.
constexpr size_t kLeadLimit = 4096;

bool IsSpace(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

size_t FirstNonSpace(const std::string& s, size_t from) {
  while (from < s.size() && IsSpace(s[from])) ++from;
  return from;
}

bool StartsWith(const std::string& s, size_t at, const std::string& prefix) {
  return s.size() - at >= prefix.size() && s.compare(at, prefix.size(), prefix) == 0;
}

// `s` from `at` on is a proper prefix of `word` (more text may complete it).
bool CouldBecome(const std::string& s, size_t at, const std::string& word) {
  const size_t n = s.size() - at;
  return n < word.size() && word.compare(0, n, s, at, n) == 0;
}

std::string RegexEscape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (std::string("\\^$.|?*+()[]{}").find(c) != std::string::npos) out += '\\';
    out += c;
  }
  return out;
}

}  // namespace

std::vector<std::string> TriggerPatterns(const GrammarTriggers& t) {
  std::vector<std::string> out;
  for (const auto& w : t.words) out.push_back(RegexEscape(w));
  for (const auto& w : t.at_start) out.push_back(RegexEscape(w));
  return out;
}

TriggerScan::TriggerScan(const GrammarTriggers& t)
    : t_(t), mode_(t.think_close.empty() ? Mode::Answer : t.think_inside ? Mode::Think : Mode::Lead) {
  for (const auto& w : t_.words) longest_ = std::max(longest_, w.size());
  if (t_.at_start.empty()) start_open_ = false;
}

bool TriggerScan::Push(llama_token tok, const std::string& piece) {
  if (mode_ == Mode::Fired) return false;
  toks_.emplace_back(tok, base_ + text_.size());
  text_ += piece;
  Scan();
  return mode_ == Mode::Fired;
}

void TriggerScan::Scan() {
  for (;;) {
    switch (mode_) {
      case Mode::Lead: {
        // Does the output open with the thinking block? (Nothing is trimmed in this mode.)
        const size_t i = FirstNonSpace(text_, 0);
        if (text_.size() < kLeadLimit && (i == text_.size() || CouldBecome(text_, i, t_.think_open))) return;
        if (!t_.think_open.empty() && StartsWith(text_, i, t_.think_open)) {
          mode_ = Mode::Think;
          answer_at_ = i + t_.think_open.size();  // where to look for the close
        } else {
          mode_ = Mode::Answer;
          answer_at_ = 0;
        }
        continue;
      }
      case Mode::Think: {
        const size_t from = std::max(answer_at_, base_) - base_;
        const size_t close = text_.find(t_.think_close, from);
        if (close == std::string::npos) {
          const size_t keep = t_.think_close.size() - 1;
          Trim(base_ + text_.size() - std::min(keep, text_.size()));
          return;
        }
        mode_ = Mode::Answer;
        answer_at_ = base_ + close + t_.think_close.size();
        continue;
      }
      case Mode::Answer: {
        const size_t from = std::max(answer_at_, base_) - base_;
        if (start_open_) {
          const size_t i = FirstNonSpace(text_, from);
          if (i == text_.size()) {
            if (text_.size() - from < kLeadLimit) return;  // only whitespace so far
            start_open_ = false;
          } else {
            bool maybe = false;
            for (const auto& w : t_.at_start) {
              if (StartsWith(text_, i, w)) { Fire(base_ + i); return; }
              maybe = maybe || CouldBecome(text_, i, w);
            }
            start_open_ = maybe;
          }
        }
        size_t best = std::string::npos;
        for (const auto& w : t_.words) best = std::min(best, text_.find(w, from));
        if (best != std::string::npos) { Fire(base_ + best); return; }
        // A trigger that ends in a later piece starts within the last longest_ - 1 characters.
        if (!start_open_) Trim(std::max(answer_at_, base_ + text_.size() - std::min(text_.size(), longest_ > 0 ? longest_ - 1 : 0)));
        return;
      }
      case Mode::Fired:
        return;
    }
  }
}

void TriggerScan::Fire(size_t at) {
  // The first token whose text reaches past `at` holds the trigger's first character.
  const size_t end = base_ + text_.size();
  for (size_t i = 0; i < toks_.size(); ++i) {
    const size_t tok_end = i + 1 < toks_.size() ? toks_[i + 1].second : end;
    if (tok_end > at) {
      for (size_t j = i; j < toks_.size(); ++j) opened_.push_back(toks_[j].first);
      break;
    }
  }
  mode_ = Mode::Fired;
  text_.clear();
  toks_.clear();
}

void TriggerScan::Trim(size_t keep_from) {
  if (keep_from <= base_) return;
  text_.erase(0, keep_from - base_);
  base_ = keep_from;
  // Drop tokens whose text ends before what is kept.
  size_t drop = 0;
  while (drop + 1 < toks_.size() && toks_[drop + 1].second <= keep_from) ++drop;
  toks_.erase(toks_.begin(), toks_.begin() + static_cast<std::ptrdiff_t>(drop));
}

}  // namespace strata
