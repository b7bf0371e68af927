#include "park_store.h"

#include <cinttypes>
#include <cstdio>
#include <cstring>

#include "slot_picker.h"

namespace strata {

bool ParkStore::Covers(const std::vector<llama_token>& tokens) const {
  for (const auto& e : entries_) {
    if (e.tokens.size() >= tokens.size() && CommonPrefix(e.tokens, tokens) == tokens.size() && Gives(e, tokens.size())) return true;
  }
  return false;
}

std::list<ParkedConversation>::iterator ParkStore::BestMatch(const std::vector<llama_token>& prompt,
                                                             size_t* common) {
  auto best = entries_.end();
  size_t best_common = 0;
  for (auto it = entries_.begin(); it != entries_.end(); ++it) {
    const size_t c = CommonPrefix(it->tokens, prompt);
    if (c > best_common && Gives(*it, c)) {
      best_common = c;
      best = it;
    }
  }
  *common = best_common;
  return best;
}

bool ParkStore::Add(ParkedConversation entry) {
  const uint64_t size = entry.state.size();
  if (size == 0 || size > budget_) return false;
  for (auto it = entries_.begin(); it != entries_.end();) {
    const size_t n = it->tokens.size();
    if (n <= entry.tokens.size() && CommonPrefix(it->tokens, entry.tokens) == n && (cuttable_ || !it->shared || n == entry.tokens.size())) {
      entry.shared = entry.shared || it->shared;
      bytes_ -= it->state.size();
      it = entries_.erase(it);
    } else {
      ++it;
    }
  }
  while (bytes_ + size > budget_ && !entries_.empty()) {
    bytes_ -= entries_.back().state.size();
    entries_.pop_back();
    counters_.evictions++;
  }
  bytes_ += size;
  entries_.push_front(std::move(entry));
  return true;
}

ParkedConversation ParkStore::Take(std::list<ParkedConversation>::iterator it) {
  ParkedConversation out = std::move(*it);
  bytes_ -= out.state.size();
  entries_.erase(it);
  return out;
}

void ParkStore::Clear() {
  entries_.clear();
  bytes_ = 0;
}

uint64_t MemAvailableBytes() {
  FILE* f = std::fopen("/proc/meminfo", "r");
  if (!f) return UINT64_MAX;
  char line[256];
  uint64_t kib = 0;
  bool found = false;
  while (std::fgets(line, sizeof line, f)) {
    if (std::strncmp(line, "MemAvailable:", 13) == 0) {
      found = std::sscanf(line + 13, "%" SCNu64, &kib) == 1;
      break;
    }
  }
  std::fclose(f);
  return found ? kib * 1024 : UINT64_MAX;
}

}  // namespace strata
