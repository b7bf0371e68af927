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
  // A recurrent model's copy of a prompt's shared start (GenerateRequest.shared_prefix): it stays
  // here when restored, for the next conversation that starts so, and a longer entry never drops it.
  bool shared = false;
};

struct ParkCounters {
  uint64_t hits = 0, misses = 0, evictions = 0, refused_low_ram = 0;
};

class ParkStore {
 public:
  // `cuttable`: an entry's KV can be cut back to any prefix of its tokens (attention). A recurrent
  // state cannot: an entry then serves a prompt only when all its tokens are the prompt's start.
  ParkStore(uint64_t budget_bytes, bool cuttable) : budget_(budget_bytes), cuttable_(cuttable) {}

  uint64_t budget() const { return budget_; }
  uint64_t bytes() const { return bytes_; }
  bool enabled() const { return budget_ > 0; }
  bool cuttable() const { return cuttable_; }
  const std::list<ParkedConversation>& entries() const { return entries_; }
  ParkCounters& counters() { return counters_; }
  const ParkCounters& counters() const { return counters_; }

  // True when some entry already holds `tokens` as (a prefix of, when cuttable) its own tokens.
  bool Covers(const std::vector<llama_token>& tokens) const;

  // The entry sharing the longest prefix with `prompt` that it can give (end() if none).
  std::list<ParkedConversation>::iterator BestMatch(const std::vector<llama_token>& prompt, size_t* common);

  // Adds an entry: drops entries it supersedes (their tokens are a prefix of its tokens; not cuttable:
  // the same tokens, or a conversation's own earlier state) and evicts least recently used ones to
  // fit. Returns false if it can never fit the budget.
  bool Add(ParkedConversation entry);

  // Takes an entry out (a restore moves it into a slot).
  ParkedConversation Take(std::list<ParkedConversation>::iterator it);

  void Clear();

 private:
  // True when `e` can give `n` tokens of its own, the common prefix with some prompt or entry.
  bool Gives(const ParkedConversation& e, size_t n) const { return cuttable_ || n == e.tokens.size(); }

  uint64_t budget_;
  bool cuttable_;
  uint64_t bytes_ = 0;
  std::list<ParkedConversation> entries_;  // most recently used first
  ParkCounters counters_;
};

// /proc/meminfo MemAvailable in bytes, or UINT64_MAX where it cannot be read.
uint64_t MemAvailableBytes();

}  // namespace strata
