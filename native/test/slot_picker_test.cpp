// Unit test of the pure slot policy (slot_picker.cpp), built and run by
// test/unit/native-slot-picker.test.ts against stub/llama.h. Prints one line per failed check
// and exits 1 if any failed.
#include <cstdio>
#include <vector>

#include "../src/slot_picker.h"

using strata::PickRestoreSlot;
using strata::SlotView;
using Tokens = std::vector<llama_token>;

static int failures = 0;

static void Expect(int got, int want, const char* what) {
  if (got == want) return;
  std::printf("FAIL %s: got %d, want %d\n", what, got, want);
  ++failures;
}

struct Slots {
  std::vector<Tokens> held;
  std::vector<SlotView> views;
  void Add(Tokens t, bool busy, uint64_t last_used) {
    held.push_back(std::move(t));
    views.push_back({busy, nullptr, last_used});
  }
  const std::vector<SlotView>& Get() {
    for (size_t i = 0; i < views.size(); ++i) views[i].held = &held[i];
    return views;
  }
};

int main() {
  const Tokens session = {1, 2, 3, 4, 5, 6};

  {  // An empty slot before an idle one holding another conversation, whatever their ages.
    Slots s;
    s.Add({9, 9, 9}, false, 1);
    s.Add({}, false, 7);
    s.Add({}, false, 8);
    Expect(PickRestoreSlot(s.Get(), session, 0), 1, "empty slot first (lowest id)");
  }
  {  // No empty slot: the least recently used idle one; busy slots never.
    Slots s;
    s.Add({7, 7}, true, 1);
    s.Add({8, 8}, false, 5);
    s.Add({9, 9}, false, 3);
    Expect(PickRestoreSlot(s.Get(), session, 0), 2, "least recently used idle slot");
  }
  {  // A slot whose whole conversation the session continues loses nothing: before an empty one.
    Slots s;
    s.Add({}, false, 0);
    s.Add({1, 2}, false, 9);
    s.Add({1, 2, 3, 4}, false, 8);
    s.Add({1, 2, 3, 4, 5, 6}, true, 10);  // busy: not taken even though it holds it all
    Expect(PickRestoreSlot(s.Get(), session, 0), 2, "the longest conversation the session supersedes");
  }
  {  // Holding more than the session (or diverging) is not superseded: the plain order applies.
    Slots s;
    s.Add({1, 2, 3, 4, 5, 6, 7}, false, 1);
    s.Add({1, 2, 3, 9}, false, 2);
    s.Add({}, false, 3);
    Expect(PickRestoreSlot(s.Get(), session, 0), 2, "longer or diverging conversations are not superseded");
    s.held[2] = {5};
    Expect(PickRestoreSlot(s.Get(), session, 0), 0, "then the least recently used");
  }
  {  // Every slot busy: -1 (the park).
    Slots s;
    s.Add({}, true, 1);
    s.Add({1, 2}, true, 2);
    Expect(PickRestoreSlot(s.Get(), session, 0), -1, "all slots busy");
  }
  {  // Free slots that queued requests are about to take are not free for the session.
    Slots s;
    s.Add({}, true, 1);
    s.Add({}, false, 2);
    s.Add({3}, false, 3);
    Expect(PickRestoreSlot(s.Get(), session, 2), -1, "two free slots, two queued");
    Expect(PickRestoreSlot(s.Get(), session, 1), 1, "two free slots, one queued");
  }
  {  // No slots at all.
    Slots s;
    Expect(PickRestoreSlot(s.Get(), session, 0), -1, "no slots");
  }

  if (failures == 0) std::printf("slot_picker: all checks passed\n");
  return failures == 0 ? 0 : 1;
}
