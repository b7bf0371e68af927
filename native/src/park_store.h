// Parked conversations: KV snapshots of sequences in host RAM with their tokens, kept within
// a byte budget with LRU eviction. Engine thread only (the snapshot copy is published by the
// engine). Pure bookkeeping: capturing and restoring state is the engine's job.
#pragma once
#include <cstdint>
#include <list>
#include <vector>

#include "llama.h"
#include "state_buffer.h"

namespace strata {

struct ParkedConversation {
  std::vector<llama_token> tokens;
  StateBuffer state;           // llama_state_seq_get_data bytes for exactly `tokens`
  uint64_t last_used = 0;      // engine tick
  double last_used_ms = 0;     // ms since engine start
};

struct ParkCounters {
  uint64_t hits = 0, misses = 0, evictions = 0, refused_low_ram = 0;
};

class ParkStore {
 public:
  explicit ParkStore(uint64_t budget_bytes) : budget_(budget_bytes) {}

  uint64_t budget() const { return budget_; }
  uint64_t bytes() const { return bytes_; }
  bool enabled() const { return budget_ > 0; }
  const std::list<ParkedConversation>& entries() const { return entries_; }
  ParkCounters& counters() { return counters_; }
  const ParkCounters& counters() const { return counters_; }

  // True when some entry already holds `tokens` as (a prefix of) its own tokens.
  bool Covers(const std::vector<llama_token>& tokens) const;

  // The entry sharing the longest prefix with `prompt` (nullptr if none shares a token).
  std::list<ParkedConversation>::iterator BestMatch(const std::vector<llama_token>& prompt, size_t* common);

  // Adds an entry: drops entries it supersedes (their tokens are a prefix of its tokens) and
  // evicts least recently used ones to fit. Returns false if it can never fit the budget.
  bool Add(ParkedConversation entry);

  // Takes an entry out (a restore moves it into a slot).
  ParkedConversation Take(std::list<ParkedConversation>::iterator it);

  void Clear();

 private:
  uint64_t budget_;
  uint64_t bytes_ = 0;
  std::list<ParkedConversation> entries_;  // most recently used first
  ParkCounters counters_;
};

// /proc/meminfo MemAvailable in bytes, or UINT64_MAX where it cannot be read.
uint64_t MemAvailableBytes();

}  // namespace strata
