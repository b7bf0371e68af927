// Trace records kept in bounded rings: one per engine step, one per finished request.
// The engine thread pushes; JS drains. Both sides go through the ring's mutex.
#pragma once
#include <cstdint>
#include <deque>
#include <mutex>
#include <vector>

namespace strata {

struct StepTraceRec {
  uint64_t step = 0;
  double t = 0;  // ms since engine start
  double build_ms = 0, decode_ms = 0, sample_ms = 0, detok_ms = 0;
  int32_t decode_tokens = 0, prompt_tokens = 0, sequences = 0;
  int32_t draft_tokens = 0, accepted_tokens = 0;  // speculative tokens verified / accepted
  double draft_ms = 0;                            // the draft model's decodes
};

struct PromptLeg {
  double t = 0;
  int32_t tokens = 0;
  double ms = 0;
};

struct RequestTraceRec {
  int64_t id = 0;
  double queued = -1, admitted = -1, prompt_done = -1, first_token = -1, finished = -1;  // -1: not reached
  int32_t slot = -1;
  int32_t reused = 0;
  bool restored = false;
  int32_t drafted = 0, accepted = 0;
  int32_t choices = 1;
  std::vector<PromptLeg> legs;
};

template <typename T>
class TraceRing {
 public:
  explicit TraceRing(size_t capacity) : capacity_(capacity) {}
  void Push(T rec) {
    if (capacity_ == 0) return;
    std::lock_guard<std::mutex> lock(mu_);
    if (items_.size() == capacity_) items_.pop_front();
    items_.push_back(std::move(rec));
  }
  std::vector<T> Drain() {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<T> out(std::make_move_iterator(items_.begin()), std::make_move_iterator(items_.end()));
    items_.clear();
    return out;
  }

 private:
  size_t capacity_;
  std::mutex mu_;
  std::deque<T> items_;
};

}  // namespace strata
