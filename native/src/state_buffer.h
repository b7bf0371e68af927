// Host memory for KV state snapshots (parked conversations, session files): tens of MiB that
// are always written in full before they are read, so, unlike a std::vector, they are never
// zero-filled first (which cost as much as the copy itself). Plain malloc: huge pages were
// tried and dropped, since their compaction stalled the engine thread for tens of ms at times.
//
// Freed blocks of 1 MiB and more are kept (256 MiB of touched pages in all at most) and handed to
// the next buffer that fits: a fresh block's first touch faults every page in, which on a 2-core
// VM made the engine's copy of a 0.5B model's 3-6K-token state (37-74 MB) take 134-290 ms into new
// memory and 30-39 ms into a kept block, and parks and prefix-cache saves come one after another
// with states of about the same size. A fresh block that may be kept is reserved twice as large as asked (untouched pages cost
// address space, not memory), so a conversation that grew still fits the block its last save used.
#pragma once
#include <cstddef>
#include <cstdint>
#include <utility>

namespace strata {

class StateBuffer {
 public:
  StateBuffer() = default;
  explicit StateBuffer(size_t n);
  ~StateBuffer() { Release(); }
  StateBuffer(StateBuffer&& o) noexcept
      : data_(std::exchange(o.data_, nullptr)),
        size_(std::exchange(o.size_, 0)),
        capacity_(std::exchange(o.capacity_, 0)),
        touched_(std::exchange(o.touched_, 0)) {}
  StateBuffer& operator=(StateBuffer&& o) noexcept {
    if (this != &o) {
      Release();
      data_ = std::exchange(o.data_, nullptr);
      size_ = std::exchange(o.size_, 0);
      capacity_ = std::exchange(o.capacity_, 0);
      touched_ = std::exchange(o.touched_, 0);
    }
    return *this;
  }
  StateBuffer(const StateBuffer&) = delete;
  StateBuffer& operator=(const StateBuffer&) = delete;

  uint8_t* data() { return data_; }
  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  size_t capacity() const { return capacity_; }
  bool empty() const { return size_ == 0; }
  // Only shrinks: the bytes a producer actually wrote (llama_state_seq_get_data may write fewer).
  void Shrink(size_t n) {
    if (n < size_) size_ = n;
  }
  void Clear() { Release(); }

  // The kept blocks: how many and their touched bytes. For tests.
  static size_t KeptBlocks();
  static size_t KeptBytes();
  // Frees every kept block.
  static void DropKept();

 private:
  void Release();

  uint8_t* data_ = nullptr;
  size_t size_ = 0;
  size_t capacity_ = 0;
  size_t touched_ = 0;  // the most this block held, over all its holders
};

}  // namespace strata
