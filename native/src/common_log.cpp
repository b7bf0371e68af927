// The logging entry points of llama.cpp's common library (common/log.h) that common/fit.cpp uses,
// defined here so the fitter links without common/log.cpp (a logger with its own worker thread
// printing to stdout). The fitter's lines go to the sink of the calling thread (fit.cpp collects
// them into the fit report) and through the addon's llama log routing (llama_log.h), so
// STRATA_LLAMA_LOG shows them as it shows llama.cpp's own.
#include <cstdarg>
#include <cstdio>
#include <string>
#include <vector>

#include "common_log.h"
#include "llama_log.h"
#include "log.h"

namespace strata {

static thread_local std::vector<std::string>* g_sink = nullptr;

CommonLogSink::CommonLogSink(std::vector<std::string>* lines) : prev_(g_sink) { g_sink = lines; }
CommonLogSink::~CommonLogSink() { g_sink = prev_; }

}  // namespace strata

// Trace level: the fitter reports its decisions with LOG_TRC.
int common_log_get_verbosity_thold(void) { return LOG_LEVEL_TRACE; }

struct common_log {};

struct common_log * common_log_main() {
  static common_log log;
  return &log;
}

void common_log_add(struct common_log *, enum ggml_log_level level, const char * fmt, ...) {
  char buf[1024];
  va_list args;
  va_start(args, fmt);
  const int n = std::vsnprintf(buf, sizeof buf, fmt, args);
  va_end(args);
  if (n < 0) return;
  std::string line(buf, static_cast<size_t>(n) < sizeof buf ? static_cast<size_t>(n) : sizeof buf - 1);
  if (strata::g_sink != nullptr && strata::g_sink->size() < 400) {
    std::string trimmed = line;
    while (!trimmed.empty() && (trimmed.back() == '\n' || trimmed.back() == '\r')) trimmed.pop_back();
    strata::g_sink->push_back(trimmed);
  }
  strata::RouteLlamaLogLine(level, line.c_str());
}
