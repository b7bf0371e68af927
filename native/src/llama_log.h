// Routes llama.cpp / ggml log lines: errors to stderr (warnings too with STRATA_LLAMA_LOG=warn,
// everything with STRATA_LLAMA_LOG=1), and lets the engine capture the lines its own calls produce, to turn
// "failed to load model" into the reason llama gave.
#pragma once
#include <string>
#include <vector>

namespace strata {

// Installs the callback once per process (idempotent).
void InstallLlamaLog();

// A line logged by other llama.cpp code (its common library) routed as llama's own lines are:
// into this thread's capture, printed by the same STRATA_LLAMA_LOG rule.
void RouteLlamaLogLine(int level, const char* text);

// Captures the lines logged on this thread while it lives.
class LlamaLogCapture {
 public:
  // quiet: nothing logged on this thread is printed while it lives (the caller reports it).
  explicit LlamaLogCapture(bool quiet = false);
  ~LlamaLogCapture();
  LlamaLogCapture(const LlamaLogCapture&) = delete;
  LlamaLogCapture& operator=(const LlamaLogCapture&) = delete;

  // The error lines logged so far, trimmed and joined with "; " (at most 3), or "".
  std::string Errors() const;
  bool Contains(const std::string& needle) const;
  bool quiet() const { return quiet_; }
  // Every captured line, in order (continuations joined); ErrorLines: the error-level ones.
  std::vector<std::string> Lines() const;
  std::vector<std::string> ErrorLines() const;

 private:
  friend void AppendCapturedLine(int level, const char* text);
  std::vector<std::pair<int, std::string>> lines_;
  LlamaLogCapture* prev_;
  bool quiet_;
};

}  // namespace strata
