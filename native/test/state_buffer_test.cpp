// Unit test of StateBuffer's kept blocks (state_buffer.cpp), built and run by
// test/unit/native-state-buffer.test.ts. Prints one line per failed check and exits 1 if any failed.
#include <cstdio>
#include <thread>

#include "../src/state_buffer.h"

using strata::StateBuffer;

static int failures = 0;

#define EXPECT(cond)                                      \
  do {                                                    \
    if (!(cond)) {                                        \
      std::printf("FAIL line %d: %s\n", __LINE__, #cond); \
      ++failures;                                         \
    }                                                     \
  } while (0)

constexpr size_t MiB = size_t{1} << 20;

int main() {
  // A freed block serves the next state that fits; a fresh one is reserved twice as large.
  const uint8_t* first = nullptr;
  {
    StateBuffer a(40 * MiB);
    EXPECT(a.size() == 40 * MiB);
    EXPECT(a.capacity() == 80 * MiB);
    a.data()[a.size() - 1] = 7;
    first = a.data();
  }
  EXPECT(StateBuffer::KeptBlocks() == 1);
  EXPECT(StateBuffer::KeptBytes() == 40 * MiB);  // touched pages, not the reservation
  {
    StateBuffer grown(70 * MiB);  // the conversation grew: still the same block
    EXPECT(grown.data() == first);
    EXPECT(grown.size() == 70 * MiB);
    EXPECT(StateBuffer::KeptBlocks() == 0);
  }
  // Too big for every kept block: a new one.
  {
    StateBuffer big(90 * MiB);
    EXPECT(big.data() != first);
  }
  EXPECT(StateBuffer::KeptBlocks() == 2);
  EXPECT(StateBuffer::KeptBytes() == 160 * MiB);
  // The smallest block that fits is taken, unless its touched pages are more than twice the state.
  {
    StateBuffer half(35 * MiB);
    EXPECT(half.data() == first);  // 70 MiB touched, 80 reserved
  }
  {
    StateBuffer small(10 * MiB);
    EXPECT(small.data() != first);
    EXPECT(StateBuffer::KeptBlocks() == 2);
  }
  // Under 1 MiB: malloc's own business, never kept.
  StateBuffer::DropKept();
  { StateBuffer tiny(64 * 1024); }
  EXPECT(StateBuffer::KeptBlocks() == 0);
  // Reservations stop at the allowance; beyond it, none.
  {
    StateBuffer s(200 * MiB);
    EXPECT(s.capacity() == 256 * MiB);
    StateBuffer huge(300 * MiB);
    EXPECT(huge.capacity() == 300 * MiB);
  }
  StateBuffer::DropKept();
  // At most 256 MiB kept: a bigger block pushes smaller ones out, a block bigger than the rest is dropped.
  {
    StateBuffer b1(60 * MiB), b2(60 * MiB), b3(60 * MiB);
  }
  EXPECT(StateBuffer::KeptBytes() == 180 * MiB);
  EXPECT(StateBuffer::KeptBlocks() == 3);
  { StateBuffer b4(100 * MiB); }  // 180 + 100 > 256: one 60 MiB block leaves for it
  EXPECT(StateBuffer::KeptBytes() == 220 * MiB);
  EXPECT(StateBuffer::KeptBlocks() == 3);
  { StateBuffer huge(300 * MiB); }  // more than the whole allowance: freed, nothing else leaves
  EXPECT(StateBuffer::KeptBytes() == 220 * MiB);
  EXPECT(StateBuffer::KeptBlocks() == 3);
  // Moves hand the block over once; Clear gives it back.
  StateBuffer::DropKept();
  {
    StateBuffer a(8 * MiB);
    const uint8_t* p = a.data();
    StateBuffer b(std::move(a));
    EXPECT(a.data() == nullptr && a.size() == 0);
    EXPECT(b.data() == p);
    b.Clear();
    EXPECT(StateBuffer::KeptBlocks() == 1);
  }
  // Freed on another thread (the session writer), taken on this one.
  StateBuffer::DropKept();
  const uint8_t* from_thread = nullptr;
  std::thread([&] {
    StateBuffer t(16 * MiB);
    from_thread = t.data();
  }).join();
  {
    StateBuffer here(16 * MiB);
    EXPECT(here.data() == from_thread);
  }
  StateBuffer::DropKept();
  if (failures == 0) std::printf("state_buffer: all checks passed\n");
  return failures == 0 ? 0 : 1;
}
