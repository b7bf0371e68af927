// Where the lines llama.cpp's common library logs go on this thread (see common_log.cpp).
#pragma once
#include <string>
#include <vector>

namespace strata {

// Collects common/log.h lines logged on this thread while it lives (nested sinks restore the outer one).
class CommonLogSink {
 public:
  explicit CommonLogSink(std::vector<std::string>* lines);
  ~CommonLogSink();
  CommonLogSink(const CommonLogSink&) = delete;
  CommonLogSink& operator=(const CommonLogSink&) = delete;

 private:
  std::vector<std::string>* prev_;
};

}  // namespace strata
