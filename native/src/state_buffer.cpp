#include "state_buffer.h"

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <new>
#include <vector>

namespace strata {

namespace {

constexpr size_t kMinKept = size_t{1} << 20;      // smaller blocks: malloc's own free lists serve them
constexpr size_t kKeepBytes = size_t{256} << 20;  // kept blocks' touched bytes in all, at most
constexpr size_t kRound = size_t{1} << 20;

struct Block {
  uint8_t* data;
  size_t capacity;
  size_t touched;  // the most any holder used: the pages that cost memory
};

// Parks and saves take and free buffers on the engine thread, the session writer frees them on its own.
// Never destroyed: a buffer freed during the process's exit (an engine finalized late) still finds them.
struct Kept {
  std::mutex mu;
  std::vector<Block> blocks;  // guarded by mu
  size_t bytes = 0;           // guarded by mu
};
Kept& K() {
  static Kept* k = new Kept();
  return *k;
}

}  // namespace

StateBuffer::StateBuffer(size_t n) {
  if (n == 0) return;
  if (n >= kMinKept) {
    Kept& k = K();
    std::lock_guard<std::mutex> lock(k.mu);
    // The smallest block that fits, among those whose touched pages a state this size would not
    // mostly waste (a parked state is counted by its size, not by its block's pages).
    size_t best = k.blocks.size();
    for (size_t i = 0; i < k.blocks.size(); ++i) {
      const Block& b = k.blocks[i];
      if (b.capacity < n || b.touched > 2 * n) continue;
      if (best == k.blocks.size() || b.capacity < k.blocks[best].capacity) best = i;
    }
    if (best < k.blocks.size()) {
      const Block b = k.blocks[best];
      k.bytes -= b.touched;
      k.blocks.erase(k.blocks.begin() + static_cast<std::ptrdiff_t>(best));
      data_ = b.data;
      capacity_ = b.capacity;
      touched_ = std::max(b.touched, n);
      size_ = n;
      return;
    }
  }
  // Room to grow for a block that may be kept: twice the size, at most the allowance.
  size_t cap = n;
  if (n >= kMinKept && n <= kKeepBytes) cap = (std::min(2 * n, kKeepBytes) + kRound - 1) / kRound * kRound;
  data_ = static_cast<uint8_t*>(std::malloc(cap));
  if (!data_ && cap > n) data_ = static_cast<uint8_t*>(std::malloc(cap = n));  // no address space to spare
  if (!data_) throw std::bad_alloc();
  size_ = n;
  capacity_ = cap;
  touched_ = n;
}

void StateBuffer::Release() {
  if (!data_) return;
  if (capacity_ >= kMinKept && touched_ <= kKeepBytes) {
    Kept& k = K();
    std::lock_guard<std::mutex> lock(k.mu);
    // Full: the smallest kept blocks make room for a bigger one, which serves more states.
    // (A block bigger than the whole allowance never gets here: it would empty it for nothing.)
    while (k.bytes + touched_ > kKeepBytes && !k.blocks.empty()) {
      size_t smallest = 0;
      for (size_t i = 1; i < k.blocks.size(); ++i) {
        if (k.blocks[i].capacity < k.blocks[smallest].capacity) smallest = i;
      }
      if (k.blocks[smallest].capacity >= capacity_) break;
      std::free(k.blocks[smallest].data);
      k.bytes -= k.blocks[smallest].touched;
      k.blocks.erase(k.blocks.begin() + static_cast<std::ptrdiff_t>(smallest));
    }
    if (k.bytes + touched_ <= kKeepBytes) {
      k.blocks.push_back({data_, capacity_, touched_});
      k.bytes += touched_;
      data_ = nullptr;
    }
  }
  std::free(data_);
  data_ = nullptr;
  size_ = 0;
  capacity_ = 0;
  touched_ = 0;
}

size_t StateBuffer::KeptBlocks() {
  Kept& k = K();
  std::lock_guard<std::mutex> lock(k.mu);
  return k.blocks.size();
}

size_t StateBuffer::KeptBytes() {
  Kept& k = K();
  std::lock_guard<std::mutex> lock(k.mu);
  return k.bytes;
}

void StateBuffer::DropKept() {
  Kept& k = K();
  std::lock_guard<std::mutex> lock(k.mu);
  for (const Block& b : k.blocks) std::free(b.data);
  k.blocks.clear();
  k.bytes = 0;
}

}  // namespace strata
