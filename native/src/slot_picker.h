// Slot choice for a new request and for a loaded session: pure functions of what each slot
// holds (no llama calls), so the policy reads in one place.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "llama.h"

namespace strata {

struct SlotView {
  bool busy = false;
  const std::vector<llama_token>* held = nullptr;  // tokens whose KV the slot holds
  uint64_t last_used = 0;                          // larger = more recent
};

struct SlotChoice {
  int slot = -1;       // the slot to take; -1: every slot is busy
  size_t common = 0;   // prompt tokens the chosen slot already holds (common prefix)
  bool owner = false;  // the slot holds this very conversation
  int donor = -1;      // another slot (busy or not) holding a longer prefix to copy, or -1
  size_t donor_common = 0;
};

size_t CommonPrefix(const std::vector<llama_token>& a, const std::vector<llama_token>& b);

// The owner of a prompt is a free slot whose held tokens the prompt continues entirely, or
// one it matches beyond what that slot shares with any other holder (other slots, parked
// conversations): a prefix every chat shares, such as one system prompt, names no owner, and
// without another holder a diverging match cannot be told from one. Busy slots are never
// taken. The owner with the longest match wins; without one: an empty free slot, else the
// least recently used free slot, and the slot holding the longest prefix becomes the donor.
SlotChoice PickSlot(const std::vector<SlotView>& slots,
                    const std::vector<const std::vector<llama_token>*>& parked,
                    const std::vector<llama_token>& prompt);

// The slot a loaded session's state goes into, or -1: keep it in the park instead. Only a slot
// that is not busy is taken, and only while more of them are free than `reserved` (the slots
// queued requests are about to take). Among those: a slot whose conversation the session
// continues entirely (it loses nothing: the longest such), else an empty slot (the lowest id),
// else the least recently used one (its conversation is parked or dropped by the caller).
int PickRestoreSlot(const std::vector<SlotView>& slots, const std::vector<llama_token>& session, size_t reserved);

}  // namespace strata
