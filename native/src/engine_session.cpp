// Session files, between steps: save the conversation holding the longest prefix of given tokens
// (its KV copied out here, the file written by the SessionWriter beside the steps); load one
// straight into an idle slot (or, with every slot busy, into the park), which blocks the step loop
// for the time of the file work. Both report where the time went in SessionResult.phases.
#include <chrono>
#include <cstring>
#include <stdexcept>

#include "engine.h"
#include "engine_error.h"
#include "slot_picker.h"

namespace strata {

SessionModelId Engine::ModelId(const std::string& identity) const {
  return {identity, info_.description, info_.params, static_cast<uint32_t>(info_.vocab_size)};
}

void Engine::DoSaveSession(Command& c) {
  SaveJob job;
  job.t0 = std::chrono::steady_clock::now();
  CommandResult& r = job.result;
  r.ticket = c.ticket;
  try {
    // The best holder: a slot (busy or not; its KV matches `held` between steps) or a parked entry,
    // the one sharing the most of the tokens. The file holds all the holder's tokens; on a
    // recurrent model, whose state cannot be cut back, the fewest beyond those shared win a tie
    // (a prompt's shared start parked apart from the conversation that went on from it).
    size_t best = 0, best_extra = 0;
    const Slot* slot = nullptr;
    const ParkedConversation* parked = nullptr;
    const auto better = [&](const std::vector<llama_token>& held) {
      const size_t common = CommonPrefix(held, c.tokens);
      const size_t extra = held.size() - common;
      if (common < best || common == 0 || (common == best && (!recurrent_ || extra >= best_extra))) return false;
      best = common;
      best_extra = extra;
      return true;
    };
    for (const Slot& s : slots_) {
      if (better(s.held)) slot = &s;
    }
    for (const auto& e : park_.entries()) {
      if (better(e.tokens)) {
        slot = nullptr;
        parked = &e;
      }
    }
    if (best == 0) throw EngineError(ErrorCode::ConversationNotFound, "no cached conversation starts with these tokens (nothing to save)");
    // The copy is made here, where the KV and the park may be touched; the file work is the writer's.
    const auto t_state = std::chrono::steady_clock::now();
    if (slot) {
      job.state = StateBuffer(llama_state_seq_get_size(ctx_.get(), slot->id));
      job.n_state = llama_state_seq_get_data(ctx_.get(), job.state.data(), job.state.size(), slot->id);
      if (job.n_state == 0) throw std::runtime_error("could not read the KV state of slot " + std::to_string(slot->id));
      job.tokens = slot->held;
    } else {
      job.state = StateBuffer(parked->state.size());
      std::memcpy(job.state.data(), parked->state.data(), parked->state.size());
      job.n_state = parked->state.size();
      job.tokens = parked->tokens;
    }
    r.session.phases.state_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t_state).count();
    r.session.tokens = static_cast<int32_t>(job.tokens.size());
  } catch (const EngineError& e) {
    r.error = e.what();
    r.code = e.code();
  } catch (const std::exception& e) {
    r.error = e.what();
  }
  if (!r.error.empty()) {
    r.session.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - job.t0).count();
    msg_->results.push_back(std::move(r));
    return;
  }
  job.path = std::move(c.path);
  job.meta = std::move(c.meta);
  job.model = ModelId(c.identity);
  writer_->Write(std::move(job));
}

namespace {

double MsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

size_t Engine::QueuedSlots() const {
  size_t n = 0;
  for (const Waiting& w : waiting_) n += static_cast<size_t>(w.req.n);
  return n;
}

void Engine::DoLoadSession(Command& c) {
  const auto t0 = std::chrono::steady_clock::now();
  CommandResult r;
  r.ticket = c.ticket;
  try {
    // Mapped and checked (checksum included) before any of it reaches a slot or the park: a
    // file that fails here changes nothing.
    SessionData d = ReadSessionFile(c.path, &r.session.phases);
    CheckSessionModel(d.model, ModelId(c.identity), c.path);
    if (d.tokens.empty()) throw std::runtime_error("session file " + c.path + " holds no tokens");
    if (d.tokens.size() > static_cast<size_t>(ctx_per_slot_)) {
      throw std::runtime_error("session file " + c.path + " holds " + std::to_string(d.tokens.size()) +
                               " tokens, more than the slot context (" + std::to_string(ctx_per_slot_) + ")");
    }
    for (llama_token t : d.tokens) {
      if (t < 0 || t >= info_.vocab_size) {
        throw EngineError(ErrorCode::SessionUnreadable, "session file " + c.path + " is corrupt (token " + std::to_string(t) +
                                 " is outside the vocabulary)");
      }
    }
    std::vector<SlotView> views(slots_.size());
    for (size_t i = 0; i < slots_.size(); ++i) views[i] = {slots_[i].run != nullptr, &slots_[i].held, slots_[i].last_used};
    const int slot = PickRestoreSlot(views, d.tokens, QueuedSlots());
    if (slot >= 0 && LoadIntoSlot(slots_[static_cast<size_t>(slot)], d, c.path, &r.session.phases)) {
      r.session.into = SessionInto::Slot;
      // A recurrent state cannot be cut back: a copy stays parked for the next conversation that
      // starts with these tokens (a prefix-cache file holds a prompt's shared start).
      if (recurrent_) ParkFileState(d, true, &r.session.phases);
    } else {
      const std::string why = ParkFileState(d, recurrent_, &r.session.phases);
      if (!why.empty()) throw EngineError(ErrorCode::ParkUnavailable, why);
      r.session.into = SessionInto::Park;
    }
    r.session.tokens = static_cast<int32_t>(d.tokens.size());
    r.session.bytes = d.file_bytes;
    r.session.meta = std::move(d.meta);
    r.token_ids = std::move(d.tokens);
  } catch (const EngineError& e) {
    r.error = e.what();
    r.code = e.code();
  } catch (const std::exception& e) {
    r.error = e.what();
  }
  r.session.ms = MsSince(t0);
  msg_->results.push_back(std::move(r));
}

// The state goes from the mapped file into the slot's KV, the one copy a restore needs. The
// slot's own conversation is parked the way admission parks a displaced one (or dropped when
// the park cannot take it), unless the session continues all of it. The slot then holds the
// session's tokens: the next request with that prefix owns the slot (PickSlot) and reads only
// what follows them. False, with the park to take it instead, when the KV pool the slots share
// has no room for it while requests hold the rest.
bool Engine::LoadIntoSlot(Slot& slot, const SessionData& d, const std::string& path, SessionPhases* phases) {
  if (CommonPrefix(slot.held, d.tokens) < slot.held.size()) MaybePark(slot, 0);
  const auto t0 = std::chrono::steady_clock::now();
  llama_memory_seq_rm(mem_, slot.id, -1, -1);
  slot.held.clear();
  PoolCut(slot, 0);
  if (!PoolMakeRoom(d.tokens.size(), &slot)) return false;
  if (llama_state_seq_set_data(ctx_.get(), d.state, d.n_state, slot.id) == 0) {
    llama_memory_seq_rm(mem_, slot.id, -1, -1);
    // The same model (checked first) with another KV layout: a context per slot, or the one the slots share.
    throw EngineError(ErrorCode::SessionModelMismatch, "session file " + path + " holds a KV state of another layout than this context's (a context per slot, or the one the slots share)");
  }
  slot.held = d.tokens;
  slot.last_used = ++tick_;
  phases->state_ms += MsSince(t0);
  return true;
}

// Every slot is busy: the state is copied out of the mapping into the park, and the next request
// with its prefix restores it from there (Restore, engine_admit.cpp). `shared` (a recurrent model's
// file, also beside the slot it went into): the entry stays parked when restored, for the next
// conversation that starts with these tokens. Returns why it could not be parked ("" when it was).
std::string Engine::ParkFileState(const SessionData& d, bool shared, SessionPhases* phases) {
  if (!park_.enabled()) return "cannot load a session while every slot is busy: parking is disabled (parkBudgetMiB is 0)";
  const uint64_t need = d.n_state;
  if (need > park_.budget()) {
    return "session needs " + std::to_string(need >> 20) + " MiB of park budget; parkBudgetMiB is " + std::to_string(park_.budget() >> 20);
  }
  const uint64_t floor = RamFloorBytes();
  if (MemAvailableBytes() < floor + need) {
    park_.counters().refused_low_ram++;
    return "cannot load a session: free RAM is below freeRamFloorMiB";
  }
  const auto t0 = std::chrono::steady_clock::now();
  ParkedConversation e;
  e.state = StateBuffer(d.n_state);
  std::memcpy(e.state.data(), d.state, d.n_state);
  e.tokens = d.tokens;
  e.last_used = ++tick_;
  e.last_used_ms = NowMs();
  e.shared = shared;
  park_.Add(std::move(e));
  phases->state_ms += MsSince(t0);
  return "";
}

}  // namespace strata
