// Host memory for KV state snapshots (parked conversations, session files): tens of MiB that
// are always written in full before they are read, so they are never zero-filled, and from
// 2 MiB on they are mapped with transparent huge pages, so filling them costs one page fault
// per 2 MiB instead of one per 4 KiB (on a 43 MiB state: ~20 faults instead of ~11,000).
#pragma once
#include <sys/mman.h>

#include <cstdint>
#include <cstdlib>
#include <new>
#include <utility>

namespace strata {

class StateBuffer {
 public:
  StateBuffer() = default;
  explicit StateBuffer(size_t n) { Allocate(n); }
  ~StateBuffer() { Free(); }
  StateBuffer(StateBuffer&& o) noexcept { Swap(o); }
  StateBuffer& operator=(StateBuffer&& o) noexcept {
    if (this != &o) {
      Free();
      Swap(o);
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
  void Clear() { Free(); }

 private:
  static constexpr size_t kHuge = size_t{2} << 20;

  void Allocate(size_t n) {
    if (n == 0) return;
    if (n >= kHuge) {
      // Over-map by one huge page to place the buffer on a 2 MiB boundary.
      const size_t len = (n + kHuge - 1) / kHuge * kHuge + kHuge;
      void* p = ::mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (p == MAP_FAILED) throw std::bad_alloc();
      const uintptr_t base = reinterpret_cast<uintptr_t>(p);
      const uintptr_t aligned = (base + kHuge - 1) / kHuge * kHuge;
      ::madvise(reinterpret_cast<void*>(aligned), len - (aligned - base), MADV_HUGEPAGE);
      map_ = p;
      map_len_ = len;
      data_ = reinterpret_cast<uint8_t*>(aligned);
    } else {
      data_ = static_cast<uint8_t*>(std::malloc(n));
      if (!data_) throw std::bad_alloc();
    }
    size_ = n;
  }
  void Free() {
    if (map_) ::munmap(map_, map_len_);
    else std::free(data_);
    map_ = nullptr;
    map_len_ = 0;
    data_ = nullptr;
    size_ = 0;
  }
  void Swap(StateBuffer& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(size_, o.size_);
    std::swap(map_, o.map_);
    std::swap(map_len_, o.map_len_);
  }

  uint8_t* data_ = nullptr;
  size_t size_ = 0;
  void* map_ = nullptr;  // the mapping when mmap'ed (data_ lies inside it)
  size_t map_len_ = 0;
};

}  // namespace strata
