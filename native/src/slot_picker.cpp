#include "slot_picker.h"

#include <algorithm>

namespace strata {

size_t CommonPrefix(const std::vector<llama_token>& a, const std::vector<llama_token>& b) {
  const size_t n = std::min(a.size(), b.size());
  size_t i = 0;
  while (i < n && a[i] == b[i]) ++i;
  return i;
}

namespace {

// Longest prefix slot `s` shares with any other holder; false when there is no other holder.
// "Any" rather than "every": one unrelated holder (an infill request) must not turn a shared
// system prompt into an ownership claim.
bool SharedWithOthers(const std::vector<SlotView>& slots, const std::vector<const std::vector<llama_token>*>& parked,
                      size_t s, size_t* shared) {
  const auto& mine = *slots[s].held;
  bool others = false;
  *shared = 0;
  for (size_t t = 0; t < slots.size(); ++t) {
    if (t == s || slots[t].held->empty()) continue;
    others = true;
    *shared = std::max(*shared, CommonPrefix(mine, *slots[t].held));
  }
  for (const auto* p : parked) {
    if (p->empty()) continue;
    others = true;
    *shared = std::max(*shared, CommonPrefix(mine, *p));
  }
  return others;
}

}  // namespace

SlotChoice PickSlot(const std::vector<SlotView>& slots,
                    const std::vector<const std::vector<llama_token>*>& parked,
                    const std::vector<llama_token>& prompt) {
  SlotChoice best;
  for (size_t s = 0; s < slots.size(); ++s) {
    if (slots[s].busy || slots[s].held->empty()) continue;
    const size_t common = CommonPrefix(*slots[s].held, prompt);
    if (common == 0) continue;
    size_t shared = 0;
    const bool continuation = common == slots[s].held->size();
    const bool has_others = SharedWithOthers(slots, parked, s, &shared);
    if (!continuation && !(has_others && common > shared)) continue;
    if (!best.owner || common > best.common ||
        (common == best.common && slots[s].last_used > slots[static_cast<size_t>(best.slot)].last_used)) {
      best = SlotChoice{static_cast<int>(s), common, true, -1, 0};
    }
  }
  if (best.owner) return best;

  // No owner: an empty free slot (lowest id keeps busy sequences contiguous for batching),
  // else the least recently used free slot.
  int empty = -1, lru = -1;
  for (size_t s = 0; s < slots.size(); ++s) {
    if (slots[s].busy) continue;
    if (empty < 0 && slots[s].held->empty()) empty = static_cast<int>(s);
    if (lru < 0 || slots[s].last_used < slots[static_cast<size_t>(lru)].last_used) lru = static_cast<int>(s);
  }
  best.slot = empty >= 0 ? empty : lru;
  if (best.slot < 0) return best;
  best.common = CommonPrefix(*slots[static_cast<size_t>(best.slot)].held, prompt);
  for (size_t s = 0; s < slots.size(); ++s) {
    if (static_cast<int>(s) == best.slot) continue;
    const size_t common = CommonPrefix(*slots[s].held, prompt);
    if (common > std::max(best.common, best.donor_common)) {
      best.donor = static_cast<int>(s);
      best.donor_common = common;
    }
  }
  return best;
}

int PickRestoreSlot(const std::vector<SlotView>& slots, const std::vector<llama_token>& session, size_t reserved) {
  size_t free = 0;
  for (const SlotView& s : slots) free += s.busy ? 0 : 1;
  if (free <= reserved) return -1;
  int superseded = -1, empty = -1, lru = -1;
  for (size_t i = 0; i < slots.size(); ++i) {
    const SlotView& s = slots[i];
    if (s.busy) continue;
    const int id = static_cast<int>(i);
    const size_t held = s.held->size();
    if (held == 0) {
      if (empty < 0) empty = id;
      continue;
    }
    if (CommonPrefix(*s.held, session) == held &&
        (superseded < 0 || held > slots[static_cast<size_t>(superseded)].held->size())) {
      superseded = id;
    }
    if (lru < 0 || s.last_used < slots[static_cast<size_t>(lru)].last_used) lru = id;
  }
  if (superseded >= 0) return superseded;
  return empty >= 0 ? empty : lru;
}

}  // namespace strata
