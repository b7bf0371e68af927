// A copy of the engine's state for readers on other threads (EngineSnapshot in addon.d.ts).
#pragma once
#include <cstdint>
#include <vector>

namespace strata {

struct SlotSnapshot {
  int32_t slot = 0;
  enum State { Idle, Prompt, Decode } state = Idle;
  int64_t request_id = -1;  // -1: none
  int32_t held_tokens = 0, prompt_tokens = 0, generated = 0;
};

struct ParkEntrySnapshot {
  int32_t tokens = 0;
  uint64_t bytes = 0;
  double last_used_ms = 0;
};

struct EngineSnapshot {
  std::vector<SlotSnapshot> slots;
  int32_t queued = 0;
  std::vector<ParkEntrySnapshot> park;
  uint64_t park_bytes = 0, park_budget = 0;
  uint64_t hits = 0, misses = 0, evictions = 0, refused_low_ram = 0;
  uint64_t prompt_tokens = 0, reused_tokens = 0, generated = 0, steps = 0, requests = 0;
  // Prompt tokens that went through llama_decode (also those of requests cancelled later).
  uint64_t prompt_computed = 0;
  uint64_t drafted = 0, accepted = 0;  // speculative tokens verified / accepted
  // Per draft position (index 0: a draft's first token): drafts that reached it / that the target
  // accepted through it.
  std::vector<uint64_t> drafted_at, accepted_at;
  uint64_t embedded = 0;               // embedding inputs pooled
};

}  // namespace strata
