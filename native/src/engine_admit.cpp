// Admission: which queued request goes next, which slot it takes, what of the slot's KV it
// keeps, and parking / restoring conversations around that. Engine thread only.
#include <algorithm>

#include "engine.h"
#include "slot_picker.h"

namespace strata {

// A slot's conversation is parked only when taking the slot loses at least this many tokens.
static constexpr size_t kMinParkLoss = 16;
// Copying another slot's sequence costs a whole stream copy: only for this many tokens saved.
static constexpr size_t kMinForkGain = 32;
// A recurrent model's checkpoints per slot (one sequence's recurrent state each, host memory).
static constexpr size_t kMaxCheckpoints = 4;

// The engine's own queue is the fallback for direct users of the addon (tests, bench-engine), who
// may submit more requests than there are slots: priority first, FIFO within a priority. The
// server never relies on it. Its one admission policy is its aging queue (backend/scheduler/),
// which dispatches a request only while the replica has a free slot and counts it in flight until
// its 'done'; so on the served path `waiting_` holds a request only from its submit to the next
// loop turn, and this loop admits it at once into a free slot.
void Engine::AdmitWaiting() {
  while (!waiting_.empty()) {
    const size_t free = static_cast<size_t>(std::count_if(slots_.begin(), slots_.end(), [](const Slot& s) { return !s.run; }));
    if (free == 0) return;
    // Higher priority first; FIFO within a priority.
    size_t best = 0;
    for (size_t i = 1; i < waiting_.size(); ++i) {
      const Waiting& a = waiting_[i];
      const Waiting& b = waiting_[best];
      if (a.req.priority > b.req.priority || (a.req.priority == b.req.priority && a.order < b.order)) best = i;
    }
    // A request with n choices needs n slots at once; it waits at the head until they are free.
    if (static_cast<size_t>(waiting_[best].req.n) > free) return;
    Waiting w = std::move(waiting_[best]);
    waiting_.erase(waiting_.begin() + static_cast<std::ptrdiff_t>(best));
    int slot = -1;
    bool restored = false;
    const size_t reuse = ChooseAndPrepareSlot(w.req, &slot, &restored);
    Slot& primary = slots_[static_cast<size_t>(slot)];
    const size_t n = static_cast<size_t>(w.req.n);
    Admit(std::move(w), primary, reuse, restored);
    if (n > 1) AdmitChoices(primary, SpareSlots(primary, n - 1));
  }
}

std::vector<Engine::Slot*> Engine::SpareSlots(const Slot& taken, size_t n) {
  // Empty slots first, then the least recently used: their conversations are parked if worth it.
  std::vector<Slot*> free;
  for (Slot& s : slots_) if (!s.run && &s != &taken) free.push_back(&s);
  std::sort(free.begin(), free.end(), [](const Slot* a, const Slot* b) {
    if (a->held.empty() != b->held.empty()) return a->held.empty();
    return a->last_used < b->last_used;
  });
  free.resize(std::min(free.size(), n));
  return free;
}

void Engine::AdmitChoices(Slot& primary, const std::vector<Slot*>& others) {
  Active& first = *primary.run;
  auto group = std::make_shared<Group>();
  group->live = static_cast<int32_t>(others.size()) + 1;
  group->ends.resize(others.size() + 1);
  first.group = group;
  for (size_t i = 0; i < others.size(); ++i) {
    Slot& slot = *others[i];
    MaybePark(slot, 0);
    llama_memory_seq_rm(mem_, slot.id, -1, -1);
    slot.held.clear();
    PoolCut(slot, 0);
    auto a = std::make_unique<Active>();
    a->req = first.req;  // the grammar prototype is shared; each choice samples with its own clone
    a->choice = static_cast<int32_t>(i) + 1;
    a->admit_order = first.admit_order;
    a->group = group;
    a->forking = true;
    SamplingParams p = a->req.sampling;
    if (p.seed != LLAMA_DEFAULT_SEED) p.seed += static_cast<uint32_t>(a->choice);
    a->sampler = std::make_unique<SeqSampler>(p, vocab_, a->req.grammar.get(), a->req.grammar_triggers.get(), a->req.prompt);
    a->text.Reset(a->req.stop);
    a->stats.prompt_tokens = first.stats.prompt_tokens;
    a->t_admitted = first.t_admitted;
    slot.last_used = ++tick_;
    slot.run = std::move(a);
  }
}

void Engine::ForkChoices(Slot& primary) {
  Active& first = *primary.run;
  const uint64_t key = first.req.key;
  const int32_t logits_at = first.logits_at;
  std::vector<Slot*> forked;
  for (Slot& s : slots_) {
    Active* a = s.run.get();
    if (!a || &s == &primary || a->req.key != key || !a->forking) continue;
    llama_memory_seq_rm(mem_, s.id, -1, -1);
    PoolCut(s, 0);
    // Not CopySequence: the primary is decoding, so nothing writes its stream before the next
    // decode applies a deferred copy between per-slot streams.
    llama_memory_seq_cp(mem_, primary.id, s.id, -1, -1);
    s.held = primary.held;
    PoolCopied(s, primary);
    if (head_) head_->CopyPrefix(primary.id, s.id, static_cast<llama_pos>(s.held.size()));
    a->n_read = first.n_read;
    a->forking = false;
    a->decoding = true;
    a->t_prompt_done = first.t_prompt_done;
    a->stats.prompt_ms = first.stats.prompt_ms;
    forked.push_back(&s);
  }
  SampleAndEmit(primary);
  // Every choice samples its first token from the same logits, each with its own sampler.
  for (Slot* s : forked) {
    if (!s->run) continue;
    s->run->logits_at = logits_at;
    SampleAndEmit(*s);
  }
}

// What of `keep` tokens can be reused: an image is read whole, so a match that ends inside one
// keeps only what precedes it.
static size_t ImageBoundary(const std::vector<ImageSpan>& images, size_t keep) {
  for (const ImageSpan& im : images) {
    if (keep > im.at && keep < im.at + im.n) return im.at;
  }
  return keep;
}

size_t Engine::ChooseAndPrepareSlot(const GenerateRequest& req, int* slot_out, bool* restored) {
  const std::vector<llama_token>& prompt = req.prompt;
  const bool reuse = req.cache_prompt;
  SyncShares();
  std::vector<SlotView> views(slots_.size());
  for (size_t i = 0; i < slots_.size(); ++i) views[i] = {slots_[i].run != nullptr, &slots_[i].held, slots_[i].last_used};
  std::vector<const std::vector<llama_token>*> parked;
  for (const auto& e : park_.entries()) parked.push_back(&e.tokens);
  const SlotChoice choice = PickSlot(views, parked, prompt);
  Slot& slot = slots_[static_cast<size_t>(choice.slot)];
  *slot_out = choice.slot;
  *restored = false;
  if (!reuse) {
    // Read it all (a cold request): the slot's conversation is kept in the park if it is worth it.
    MaybePark(slot, 0);
    TrimSlot(slot, 0);
    return 0;
  }

  // What each source would let the request keep; at least one prompt token is evaluated.
  const size_t limit = prompt.size() - 1;
  const size_t own = Keepable(slot, ImageBoundary(req.images, std::min(choice.common, limit)));
  size_t fork = choice.donor >= 0 ? Keepable(slots_[static_cast<size_t>(choice.donor)],
                                             ImageBoundary(req.images, std::min(choice.donor_common, limit))) : 0;
  if (fork < own + kMinForkGain) fork = 0;
  const size_t local = std::max(own, fork);

  if (park_.enabled() && local < limit) {
    size_t common = 0;
    auto it = park_.BestMatch(prompt, &common);
    if (it != park_.entries().end() && ImageBoundary(req.images, std::min(common, limit)) > local) {
      MaybePark(slot, 0);  // may evict entries: look the match up again
      it = park_.BestMatch(prompt, &common);
      const size_t keep = ImageBoundary(req.images, std::min(common, limit));
      if (it != park_.entries().end() && keep > local) return Restore(slot, it, keep, restored);
    }
    park_.counters().misses++;
  }
  if (fork > 0) {
    // Copy the donor's sequence (a shared system prompt, or a busy slot's conversation).
    const Slot& donor = slots_[static_cast<size_t>(choice.donor)];
    MaybePark(slot, 0);
    llama_memory_seq_rm(mem_, slot.id, -1, -1);
    PoolCut(slot, 0);
    if (!CopySequence(donor.id, slot.id)) {
      slot.held.clear();
      return 0;
    }
    slot.held = donor.held;
    slot.checkpoints = donor.checkpoints;
    PoolCopied(slot, donor);
    if (head_) head_->CopyPrefix(donor.id, slot.id, static_cast<llama_pos>(fork));
    return TrimSlot(slot, fork);
  }
  MaybePark(slot, own);
  return TrimSlot(slot, own);
}

size_t Engine::Restore(Slot& slot, std::list<ParkedConversation>::iterator it, size_t keep, bool* restored) {
  llama_memory_seq_rm(mem_, slot.id, -1, -1);
  slot.held.clear();
  PoolCut(slot, 0);
  if (info_.kv_unified) {
    // The conversation's cells come from idle slots if they must; parking them may evict park
    // entries, so the match is looked up again.
    const std::vector<llama_token> tokens = it->tokens;
    const bool room = PoolMakeRoom(tokens.size(), &slot);
    size_t common = 0;
    it = park_.BestMatch(tokens, &common);
    if (!room || it == park_.entries().end() || common < keep) {
      park_.counters().misses++;
      return 0;
    }
  }
  if (llama_state_seq_set_data(ctx_.get(), it->state.data(), it->state.size(), slot.id) == 0) {
    // The snapshot does not fit this context (e.g. a session from another setup): drop it.
    llama_memory_seq_rm(mem_, slot.id, -1, -1);
    park_.Take(it);
    park_.counters().misses++;
    return 0;
  }
  slot.held = it->tokens;
  if (keep >= it->tokens.size() && !it->shared) {
    park_.Take(it);  // the slot now holds all of it
  } else {
    it->last_used = ++tick_;
    it->last_used_ms = NowMs();
  }
  park_.counters().hits++;
  const size_t kept = TrimSlot(slot, keep);
  *restored = kept > 0;
  return kept;
}

size_t Engine::TrimSlot(Slot& slot, size_t keep) {
  if (keep < slot.held.size()) {
    // A recurrent state is never cut by position here: the states llama.cpp keeps to roll drafts
    // back (n_rs_seq) are those of the sequence's last decode alone, and a cut further back than
    // it took would take a state of another step.
    if (!recurrent_ && llama_memory_seq_rm(mem_, slot.id, static_cast<llama_pos>(keep), -1)) {
      slot.held.resize(keep);
      PoolCut(slot, keep);
    } else if (RestoreCheckpoint(slot, keep)) {
      keep = slot.held.size();
    } else {
      // A state that cannot be cut there (recurrent, without a checkpoint it can go back to): start over.
      llama_memory_seq_rm(mem_, slot.id, -1, -1);
      slot.held.clear();
      PoolCut(slot, 0);
      return 0;
    }
  }
  // Sliding-window layers may have dropped positions the continuation still needs.
  const int32_t n_swa = llama_model_n_swa(model_.get());
  if (keep > 0 && n_swa > 0) {
    const llama_pos pos_min = llama_memory_seq_pos_min(mem_, slot.id);
    if (pos_min > std::max<llama_pos>(0, static_cast<llama_pos>(keep) - n_swa)) {
      llama_memory_seq_rm(mem_, slot.id, -1, -1);
      slot.held.clear();
      PoolCut(slot, 0);
      return 0;
    }
  }
  return keep;
}

const Engine::Checkpoint* Engine::CheckpointWithin(const Slot& slot, size_t keep) const {
  const Checkpoint* best = nullptr;
  for (const Checkpoint& c : slot.checkpoints) {
    const size_t at = c.tokens.size();
    if (at == 0 || at > keep || (best && at <= best->tokens.size()) || CommonPrefix(c.tokens, slot.held) < at) continue;
    best = &c;
  }
  return best;
}

size_t Engine::Keepable(const Slot& slot, size_t keep) const {
  if (!recurrent_ || keep >= slot.held.size()) return keep;
  const Checkpoint* c = CheckpointWithin(slot, keep);
  return c ? c->tokens.size() : 0;
}

// A checkpoint holds the recurrent state after its tokens: the latest one the slot still holds and
// the request keeps whole replaces the slot's state, and the rest (attention KV) is cut there.
bool Engine::RestoreCheckpoint(Slot& slot, size_t keep) {
  const Checkpoint* c = CheckpointWithin(slot, keep);
  if (!c) return false;
  const size_t at = c->tokens.size();
  if (llama_state_seq_set_data_ext(ctx_.get(), c->state.data(), c->state.size(), slot.id, LLAMA_STATE_SEQ_FLAGS_PARTIAL_ONLY) == 0 ||
      !llama_memory_seq_rm(mem_, slot.id, static_cast<llama_pos>(at), -1)) {
    slot.checkpoints.clear();
    return false;
  }
  slot.held.resize(at);
  PoolCut(slot, at);
  return true;
}

// After a prompt is read on a recurrent model: its state (the recurrent part alone, a few MiB for
// small models) joins the slot's checkpoints; those of another conversation (not a prefix of what
// the slot holds now) go, and past kMaxCheckpoints the oldest. None is taken that would bring free
// RAM below the park's floor.
void Engine::SaveCheckpoint(Slot& slot) {
  auto& cps = slot.checkpoints;
  cps.erase(std::remove_if(cps.begin(), cps.end(), [&](const Checkpoint& c) {
    return c.tokens.size() >= slot.held.size() || CommonPrefix(c.tokens, slot.held) < c.tokens.size();
  }), cps.end());
  if (cps.size() >= kMaxCheckpoints) cps.erase(cps.begin(), cps.begin() + static_cast<std::ptrdiff_t>(cps.size() - kMaxCheckpoints + 1));
  Checkpoint c;
  const size_t n = llama_state_seq_get_size_ext(ctx_.get(), slot.id, LLAMA_STATE_SEQ_FLAGS_PARTIAL_ONLY);
  if (MemAvailableBytes() < RamFloorBytes() + n) return;
  c.state.resize(n);
  if (n == 0 || llama_state_seq_get_data_ext(ctx_.get(), c.state.data(), n, slot.id, LLAMA_STATE_SEQ_FLAGS_PARTIAL_ONLY) != n) return;
  c.tokens = slot.held;
  cps.push_back(std::move(c));
}

void Engine::ParkCopy(const Slot& slot, bool shared) {
  if (park_.Covers(slot.held)) return;
  ParkedConversation e;
  if (!CaptureState(slot.id, e.state)) return;
  e.tokens = slot.held;
  e.last_used = ++tick_;
  e.last_used_ms = NowMs();
  e.shared = shared;
  park_.Add(std::move(e));
}

bool Engine::CopySequence(int32_t src, int32_t dst) {
  if (info_.kv_unified) {
    // One stream: the copy is the cells' sequence sets, done at once.
    llama_memory_seq_cp(mem_, src, dst, -1, -1);
    return true;
  }
  // Between per-slot streams llama.cpp copies the data only at the next decode, from whatever the
  // source holds then: a conversation restored into the donor slot later in this admission round
  // would be copied instead, and the request would read another conversation's KV. So the copy
  // goes through host memory now.
  StateBuffer state(llama_state_seq_get_size(ctx_.get(), src));
  const size_t n = state.size() == 0 ? 0 : llama_state_seq_get_data(ctx_.get(), state.data(), state.size(), src);
  if (n == 0 || llama_state_seq_set_data(ctx_.get(), state.data(), n, dst) == 0) {
    llama_memory_seq_rm(mem_, dst, -1, -1);
    return false;
  }
  return true;
}

bool Engine::CaptureState(int32_t seq, StateBuffer& out) {
  const size_t size = llama_state_seq_get_size(ctx_.get(), seq);
  if (size == 0 || size > park_.budget()) return false;
  const uint64_t floor = RamFloorBytes();
  if (MemAvailableBytes() < floor + size) {
    park_.counters().refused_low_ram++;
    return false;
  }
  out = StateBuffer(size);
  const size_t n = llama_state_seq_get_data(ctx_.get(), out.data(), out.size(), seq);
  if (n == 0) {
    out.Clear();
    return false;
  }
  out.Shrink(n);
  if (MemAvailableBytes() < floor) {
    park_.counters().refused_low_ram++;
    out.Clear();
    return false;
  }
  return true;
}

void Engine::MaybePark(Slot& slot, size_t keep) {
  if (!park_.enabled() || slot.held.size() < keep + kMinParkLoss) return;
  ParkCopy(slot, false);
}

void Engine::Admit(Waiting w, Slot& slot, size_t reuse, bool restored) {
  auto a = std::make_unique<Active>();
  a->req = std::move(w.req);
  a->n_read = reuse;
  a->sampler = std::make_unique<SeqSampler>(a->req.sampling, vocab_, a->req.grammar.get(), a->req.grammar_triggers.get(), a->req.prompt);
  a->text.Reset(a->req.stop);
  a->stats.prompt_tokens = static_cast<int32_t>(a->req.prompt.size());
  a->stats.reused = static_cast<int32_t>(reuse);
  a->t_admitted = NowMs();
  a->admit_order = ++admits_;
  a->trace.id = a->req.id;
  a->trace.queued = w.queued_ms;
  a->trace.admitted = a->t_admitted;
  a->trace.slot = slot.id;
  a->trace.reused = static_cast<int32_t>(reuse);
  a->trace.restored = restored;
  a->trace.choices = a->req.n;
  const size_t share = static_cast<size_t>(a->req.shared_prefix);
  if (recurrent_ && park_.enabled() && share > reuse && share < a->req.prompt.size() &&
      ImageBoundary(a->req.images, share) == share) {
    a->share_at = share;
  }

  EngineEvent& e = NewEvent(EventType::Admitted, a->req.id);
  e.slot = slot.id;
  e.total = a->stats.prompt_tokens;
  e.stats.reused = a->stats.reused;
  e.restored = restored;

  totals_.prompt_tokens += a->req.prompt.size();
  totals_.reused_tokens += reuse;
  slot.last_used = ++tick_;
  slot.run = std::move(a);
}

}  // namespace strata
