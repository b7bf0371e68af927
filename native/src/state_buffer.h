// Host memory for KV state snapshots (parked conversations, session files): tens of MiB that
// are always written in full before they are read, so, unlike a std::vector, they are never
// zero-filled first (which cost as much as the copy itself). Plain malloc: huge pages were
// tried and dropped, since their compaction stalled the engine thread for tens of ms at times.
#pragma once
#include <cstdint>
#include <cstdlib>
#include <new>
#include <utility>

namespace strata {

class StateBuffer {
 public:
  StateBuffer() = default;
  explicit StateBuffer(size_t n) {
    if (n == 0) return;
    data_ = static_cast<uint8_t*>(std::malloc(n));
    if (!data_) throw std::bad_alloc();
    size_ = n;
  }
  ~StateBuffer() { std::free(data_); }
  StateBuffer(StateBuffer&& o) noexcept : data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)) {}
  StateBuffer& operator=(StateBuffer&& o) noexcept {
    if (this != &o) {
      std::free(data_);
      data_ = std::exchange(o.data_, nullptr);
      size_ = std::exchange(o.size_, 0);
    }
    return *this;
  }
  StateBuffer(const StateBuffer&) = delete;
  StateBuffer& operator=(const StateBuffer&) = delete;

  uint8_t* data() { return data_; }
  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  // Only shrinks: the bytes a producer actually wrote (llama_state_seq_get_data may write fewer).
  void Shrink(size_t n) {
    if (n < size_) size_ = n;
  }
  void Clear() {
    std::free(data_);
    data_ = nullptr;
    size_ = 0;
  }

 private:
  uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace strata
