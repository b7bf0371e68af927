#include "llama_log.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "llama.h"

namespace strata {

static thread_local LlamaLogCapture* g_capture = nullptr;
static thread_local int g_last_level = GGML_LOG_LEVEL_INFO;

void AppendCapturedLine(int level, const char* text) {
  LlamaLogCapture* c = g_capture;
  if (!c) return;
  // GGML_LOG_LEVEL_CONT continues the previous line.
  if (level == GGML_LOG_LEVEL_CONT && !c->lines_.empty()) {
    c->lines_.back().second += text;
    return;
  }
  if (c->lines_.size() < 4096) c->lines_.emplace_back(level, text);
}

// Lowest level printed: errors by default; STRATA_LLAMA_LOG=warn adds warnings, =1 everything.
static int PrintLevel() {
  const char* v = std::getenv("STRATA_LLAMA_LOG");
  if (!v || !*v || std::strcmp(v, "0") == 0) return GGML_LOG_LEVEL_ERROR;
  if (std::strcmp(v, "warn") == 0) return GGML_LOG_LEVEL_WARN;
  return GGML_LOG_LEVEL_DEBUG;
}

static void LogCallback(ggml_log_level level, const char* text, void*) {
  static const int print_level = PrintLevel();
  const int effective = level == GGML_LOG_LEVEL_CONT ? g_last_level : level;
  if (level != GGML_LOG_LEVEL_CONT) g_last_level = level;
  AppendCapturedLine(level, text);
  const bool quiet = g_capture != nullptr && g_capture->quiet();
  if (!quiet && effective >= print_level && effective != GGML_LOG_LEVEL_NONE) std::fputs(text, stderr);
}

void RouteLlamaLogLine(int level, const char* text) { LogCallback(static_cast<ggml_log_level>(level), text, nullptr); }

void InstallLlamaLog() {
  static std::once_flag once;
  std::call_once(once, [] { llama_log_set(LogCallback, nullptr); });
}

LlamaLogCapture::LlamaLogCapture(bool quiet) : prev_(g_capture), quiet_(quiet || (g_capture != nullptr && g_capture->quiet_)) {
  g_capture = this;
}
LlamaLogCapture::~LlamaLogCapture() { g_capture = prev_; }

static std::string Trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ' || s.back() == '\r')) s.pop_back();
  return s;
}

std::string LlamaLogCapture::Errors() const {
  std::string out;
  int n = 0;
  for (const auto& l : lines_) {
    if (l.first != GGML_LOG_LEVEL_ERROR || n == 3) continue;
    if (!out.empty()) out += "; ";
    out += Trim(l.second);
    ++n;
  }
  return out;
}

bool LlamaLogCapture::Contains(const std::string& needle) const {
  for (const auto& l : lines_) {
    if (l.second.find(needle) != std::string::npos) return true;
  }
  return false;
}

std::vector<std::string> LlamaLogCapture::Lines() const {
  std::vector<std::string> out;
  out.reserve(lines_.size());
  for (const auto& l : lines_) out.push_back(l.second);
  return out;
}

std::vector<std::string> LlamaLogCapture::ErrorLines() const {
  std::vector<std::string> out;
  for (const auto& l : lines_) {
    if (l.first == GGML_LOG_LEVEL_ERROR) out.push_back(l.second);
  }
  return out;
}

}  // namespace strata
