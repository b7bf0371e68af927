// The KV pool the slots share (llama's kv_unified, the default without a context per slot): each
// step gets cells for every decoder's token first, then for prompts that fit whole (the others
// wait, holding what they read); idle slots' conversations are parked to make room. When nothing
// can go on, the request admitted last ends with context_full and the others are not touched.
// Cells are counted from the slots' tokens, a copied prefix once (PoolCopied): an upper bound of
// what llama's cache holds, so a batch planned within it always finds room. Engine thread only.
#include <algorithm>

#include "engine.h"

namespace strata {

namespace {

size_t Own(const std::vector<llama_token>& held, size_t shared) { return held.size() - std::min(shared, held.size()); }

}  // namespace

size_t Engine::PoolUsed() const {
  size_t n = 0;
  for (const Slot& s : slots_) n += Own(s.held, s.shared);
  return n;
}

// A base cut or cleared outside admission (a failed batch or image) shrinks what others share of it.
void Engine::SyncShares() {
  for (Slot& s : slots_) {
    if (s.base < 0) continue;
    s.shared = std::min({s.shared, slots_[static_cast<size_t>(s.base)].held.size(), s.held.size()});
    if (s.shared == 0) s.base = -1;
  }
}

void Engine::PoolCut(Slot& slot, size_t keep) {
  if (!info_.kv_unified) return;
  SyncShares();
  for (Slot& s : slots_) {
    if (s.base == slot.id) s.shared = std::min(s.shared, keep);
    if (s.shared == 0) s.base = -1;
  }
  slot.shared = std::min(slot.shared, keep);
  if (slot.shared == 0) slot.base = -1;
}

void Engine::PoolCopied(Slot& to, const Slot& from) {
  if (!info_.kv_unified || from.held.empty()) return;
  to.base = from.id;
  to.shared = from.held.size();
}

// Parks idle slots' conversations (least recently used first, never `keep`) until `need` cells
// are freed or none is left; returns the cells freed.
size_t Engine::EvictIdle(size_t need, const Slot* keep) {
  const size_t before = PoolUsed();
  size_t freed = 0;
  while (freed < need) {
    Slot* victim = nullptr;
    for (Slot& s : slots_) {
      if (s.run || &s == keep || s.held.empty()) continue;
      if (!victim || s.last_used < victim->last_used) victim = &s;
    }
    if (!victim) break;
    MaybePark(*victim, 0);
    llama_memory_seq_rm(mem_, victim->id, -1, -1);
    victim->held.clear();
    PoolCut(*victim, 0);
    if (draft_) draft_->Forget(victim->id);
    if (head_) head_->Forget(victim->id);
    const size_t now = PoolUsed();
    freed = before > now ? before - now : 0;
  }
  return freed;
}

bool Engine::PoolMakeRoom(size_t need, const Slot* keep) {
  if (!info_.kv_unified) return true;
  SyncShares();
  const size_t pool = static_cast<size_t>(info_.pool);
  const size_t used = PoolUsed();
  const size_t free = pool > used ? pool - used : 0;
  if (need <= free) return true;
  return EvictIdle(need - free, keep) >= need - free;
}

// Ends the running request admitted last that holds cells (in this step's batch only, when asked),
// parking what it read so a retry reads no more than it must. False when none does.
bool Engine::EndLatestForPool(bool in_batch_only) {
  Slot* latest = nullptr;
  for (Slot& s : slots_) {
    Active* a = s.run.get();
    if (!a || (s.held.empty() && !a->decoding)) continue;
    if (in_batch_only && a->chunk == 0 && !a->decoding) continue;
    if (!latest || a->admit_order > latest->run->admit_order) latest = &s;
  }
  if (!latest) return false;
  const uint64_t key = latest->run->req.key;
  const int64_t id = latest->run->req.id;
  std::vector<Slot*> held;
  for (Slot& s : slots_) if (s.run && s.run->req.key == key) held.push_back(&s);
  const std::string why = "the context the slots share is full (" + std::to_string(info_.pool) +
      " tokens, held by the requests running beside this one); the request that came last ends so the others go on: "
      "retry it when they are done, or start the server with --ctx to give each slot its own context";
  const size_t at = msg_->events.size();
  FinishRequest(key, FinishReason::Error, why);
  for (size_t i = at; i < msg_->events.size(); ++i) {
    EngineEvent& e = msg_->events[i];
    if (e.type == EventType::Done && e.id == id) e.error_code = "context_full";
  }
  // What it read goes to the park (a retry reads no more than it must), its cells back to the pool.
  for (Slot* s : held) {
    MaybePark(*s, 0);
    llama_memory_seq_rm(mem_, s->id, -1, -1);
    s->held.clear();
    PoolCut(*s, 0);
    if (draft_) draft_->Forget(s->id);
    if (head_) head_->Forget(s->id);
  }
  return true;
}

void Engine::ReservePool() {
  if (!info_.kv_unified) return;
  SyncShares();
  const size_t pool = static_cast<size_t>(info_.pool);
  for (;;) {
    std::vector<Slot*> running;
    for (Slot& s : slots_) if (s.run) running.push_back(&s);
    std::sort(running.begin(), running.end(), [](const Slot* a, const Slot* b) {
      return a->run->admit_order != b->run->admit_order ? a->run->admit_order < b->run->admit_order : a->id < b->id;
    });
    size_t decode = 0, drafts = 0;
    for (const Slot* s : running) {
      if (!s->run->decoding) continue;
      decode += 1;
      drafts += s->run->draft.size();
    }
    size_t used = PoolUsed();
    auto free = [&] { return pool > used ? pool - used : 0; };
    if (decode + drafts > free()) used -= EvictIdle(decode + drafts - free(), nullptr);
    if (decode + drafts > free()) {
      // Drafts are a bonus: they go before anyone's answer does.
      for (Slot* s : running) {
        s->run->draft.clear();
        s->run->draft_predicted = 0;
      }
      drafts = 0;
    }
    if (decode > free()) {
      if (EndLatestForPool(false)) continue;
      return;
    }
    size_t room = free() - decode - drafts;
    bool moving = decode > 0;
    // What parking every idle conversation would free (less where a running sequence shares its cells).
    size_t idle = 0;
    for (const Slot& s : slots_) if (!s.run) idle += Own(s.held, s.shared);
    for (Slot* s : running) {
      Active& a = *s->run;
      if (a.decoding || a.forking) continue;
      const size_t rest = a.req.prompt.size() - a.n_read;
      // Idle conversations are parked only when that lets the prompt go on.
      if (rest > room && rest <= room + idle) {
        const size_t got = EvictIdle(rest - room, nullptr);
        used -= got;
        room += got;
        idle -= std::min(idle, got);
      }
      a.pool_wait = rest > room;
      if (a.pool_wait) continue;
      room -= rest;
      moving = true;
    }
    if (moving || running.empty()) return;
    // Every prompt waits for cells another holds: the latest one that holds some ends.
    if (!EndLatestForPool(false)) return;
  }
}

void Engine::PoolOverflow() {
  if (!EndLatestForPool(true)) EndLatestForPool(false);
}

}  // namespace strata
