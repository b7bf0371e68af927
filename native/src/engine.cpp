// Engine thread, command queue, closing, and the published snapshot.
#include "engine.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>

namespace strata {

Engine::Engine(llama_model* model, llama_context* ctx, CpuThreadpools pools, std::unique_ptr<DraftModel> draft,
               const EngineConfig& cfg, const ModelInfo& info, Sink sink)
    : model_(model),
      ctx_(ctx),
      pools_(pools),
      vocab_(llama_model_get_vocab(model)),
      mem_(llama_get_memory(ctx)),
      cfg_(cfg),
      info_(info),
      ctx_per_slot_(info.ctx),
      recurrent_(info.recurrent),
      rollback_max_(recurrent_ ? static_cast<int32_t>(llama_n_rs_seq(ctx)) : INT32_MAX),
      sink_(std::move(sink)),
      t0_(std::chrono::steady_clock::now()),
      draft_(std::move(draft)),
      park_(static_cast<uint64_t>(cfg.park_budget_mib * 1024.0 * 1024.0), !info.recurrent),
      batch_(new llama_batch(llama_batch_init(std::max(cfg.batch, cfg.slots), 0, 1))),
      msg_(std::make_unique<StepMessage>()),
      piece_(256),
      step_traces_(static_cast<size_t>(std::max(cfg.trace_steps, 0))),
      request_traces_(static_cast<size_t>(std::max(cfg.trace_steps, 0))) {
  slots_.resize(static_cast<size_t>(cfg.slots));
  for (size_t i = 0; i < slots_.size(); ++i) slots_[i].id = static_cast<int32_t>(i);
  if (cfg.spec.ngram && cfg.spec.ngram_kind != "lookup") ngram_ = std::make_unique<LlamaNgramDrafter>(cfg.spec.ngram_kind, cfg.slots, cfg.spec.draft_max);
  prompt_order_.reserve(slots_.size());
  const char* test_throw = std::getenv("STRATA_TEST_ENGINE_THROW");
  test_throw_ = test_throw != nullptr && std::strcmp(test_throw, "bad_alloc") == 0;
  writer_ = std::make_unique<SessionWriter>([this](CommandResult r) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      saved_.push_back(std::move(r));
    }
    cv_.notify_one();
  });
  PublishSnapshot();
}

Engine::~Engine() {
  StopSilently();
  writer_.reset();  // finishes the files it was given
  slots_.clear();  // their samplers
  draft_.reset();  // before the target's threadpools, which its context shares
  head_.reset();   // likewise, and before the target's context, whose hidden states it reads
  vision_.reset();  // the projector was made for model_
  batch_.reset();
  ctx_.reset();
  FreeCpuThreadpools(pools_);  // after the context that used them
  model_.reset();
}

void Engine::Start() {
  thread_ = std::thread([this] { Run(); });
}

double Engine::NowMs() const {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0_).count();
}

void Engine::Enqueue(Command c) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    commands_.push_back(std::move(c));
  }
  cv_.notify_one();
}

void Engine::Submit(GenerateRequest req) {
  Command c;
  c.kind = Command::Submit;
  c.req = std::move(req);
  c.t_ms = NowMs();
  Enqueue(std::move(c));
}

void Engine::SubmitEmbed(EmbedRequest req) {
  Command c;
  c.kind = Command::Embed;
  c.embed = std::move(req);
  c.t_ms = NowMs();
  Enqueue(std::move(c));
}

void Engine::Cancel(uint64_t key) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    cancels_.push_back(key);
  }
  cv_.notify_one();
}

void Engine::SaveSession(uint64_t ticket, std::string path, std::vector<llama_token> tokens, std::string identity,
                         std::string meta) {
  Command c;
  c.kind = Command::SaveSession;
  c.ticket = ticket;
  c.path = std::move(path);
  c.tokens = std::move(tokens);
  c.identity = std::move(identity);
  c.meta = std::move(meta);
  Enqueue(std::move(c));
}

void Engine::LoadSession(uint64_t ticket, std::string path, std::string identity) {
  Command c;
  c.kind = Command::LoadSession;
  c.ticket = ticket;
  c.path = std::move(path);
  c.identity = std::move(identity);
  Enqueue(std::move(c));
}

void Engine::RequestClose() {
  Command c;
  c.kind = Command::Close;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (close_requested_) return;
    close_requested_ = true;
    commands_.push_back(std::move(c));
  }
  cv_.notify_one();
}

void Engine::StopSilently() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_silently_ = true;
  }
  cv_.notify_one();
  Join();
}

void Engine::Join() {
  if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id()) thread_.join();
}

bool Engine::WaitForWork(std::deque<Command>& cmds, std::vector<uint64_t>& cancels) {
  bool free_slot = false, running = false;
  for (const auto& s : slots_) {
    if (s.run) running = true;
    else free_slot = true;
  }
  const bool work = running || (!waiting_.empty() && free_slot) || !embed_waiting_.empty();
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return work || stop_silently_ || !commands_.empty() || !cancels_.empty() || !saved_.empty(); });
  if (!work && waiting_.empty() && info_.admit_window_ms > 0) GatherBurst(lock);
  if (stop_silently_) return false;
  cmds.swap(commands_);
  cancels.swap(cancels_);
  return true;
}

void Engine::TakeSaved() {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& r : saved_) msg_->results.push_back(std::move(r));
  saved_.clear();
}

// Idle, and a request has come: wait up to admit_window_ms for the rest of a burst (clients that
// send at once reach it 0.3-6 ms apart on a 2-core machine), so that all of it is read in one
// step. Ends early when the requests fill every slot (all are free: the engine is idle), on close.
void Engine::GatherBurst(std::unique_lock<std::mutex>& lock) {
  const auto submits = [this] {
    size_t n = 0;
    for (const Command& c : commands_) {
      if (c.kind == Command::Close) return SIZE_MAX;
      if (c.kind == Command::Submit) n += static_cast<size_t>(std::max<int32_t>(1, c.req.n));
    }
    return n;
  };
  const size_t first = submits();
  if (first == 0 || first == SIZE_MAX || first >= slots_.size()) return;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(info_.admit_window_ms);
  cv_.wait_until(lock, deadline, [&] { return stop_silently_ || submits() >= slots_.size(); });
}

void Engine::Run() {
  // Nothing may leave the thread as an exception (it would abort the process with SIGABRT and
  // no request would learn why): every request gets the reason as its error instead.
  try {
    RunLoop();
  } catch (const std::bad_alloc&) {
    FailEverything("out of memory on the engine thread (std::bad_alloc)");
  } catch (const std::exception& e) {
    FailEverything(std::string("engine thread failed: ") + e.what());
  } catch (...) {
    FailEverything("engine thread failed with an unknown exception");
  }
}

void Engine::FailEverything(const std::string& reason) {
  try {
    for (auto& w : waiting_) EndWaiting(w, FinishReason::Error, reason);
    waiting_.clear();
    for (auto& s : slots_) {
      if (s.run) Finish(s, FinishReason::Error, reason);
    }
    PublishSnapshot();
  } catch (...) {
    // Not even that: the message still says closed and why; the N-API side fails what is left.
  }
  try {
    if (!msg_) msg_ = std::make_unique<StepMessage>();
    msg_->closed = true;
    msg_->fatal = reason;
    Post();
  } catch (...) {
  }
}

void Engine::RunLoop() {
  std::deque<Command> cmds;
  std::vector<uint64_t> cancels;
  bool closing = false;
  while (!closing) {
    if (!WaitForWork(cmds, cancels)) return;
    TakeSaved();
    closing = std::any_of(cmds.begin(), cmds.end(), [](const Command& c) { return c.kind == Command::Close; });
    HandleCommands(cmds, cancels);
    if (closing) break;
    if (info_.embedding) {
      StepEmbeddings();
    } else {
      AdmitWaiting();
      Step();
    }
    // Published before the events leave, so a reader reacting to an event sees at least that state.
    PublishSnapshot();
    Post();
  }
  CloseAll();
  PublishSnapshot();
  // Saves still being written end before the message that says closed: their callers get answers.
  writer_->Flush();
  TakeSaved();
  msg_->closed = true;
  Post();
}

void Engine::HandleCommands(std::deque<Command>& cmds, std::vector<uint64_t>& cancels) {
  // Cancels first; one whose submit is in this same batch is remembered and applied to it.
  std::set<uint64_t> unmatched;
  for (uint64_t key : cancels) CancelRequest(key, unmatched);
  cancels.clear();
  for (auto& c : cmds) {
    switch (c.kind) {
      case Command::Submit: {
        Waiting w{std::move(c.req), order_++, c.t_ms};
        if (unmatched.erase(w.req.key)) {
          EndWaiting(w, FinishReason::Cancel, "");
        } else {
          waiting_.push_back(std::move(w));
        }
        break;
      }
      case Command::Embed: {
        c.embed.queued_ms = c.t_ms;
        if (unmatched.erase(c.embed.key)) {
          EndEmbed(c.embed, FinishReason::Cancel, "");
        } else {
          embed_waiting_.push_back(std::move(c.embed));
        }
        break;
      }
      case Command::SaveSession: DoSaveSession(c); break;
      case Command::LoadSession: DoLoadSession(c); break;
      case Command::Close: break;
    }
  }
  cmds.clear();
}

void Engine::CancelRequest(uint64_t key, std::set<uint64_t>& unmatched) {
  for (size_t i = 0; i < waiting_.size(); ++i) {
    if (waiting_[i].req.key == key) {
      Waiting w = std::move(waiting_[i]);
      waiting_.erase(waiting_.begin() + static_cast<std::ptrdiff_t>(i));
      EndWaiting(w, FinishReason::Cancel, "");
      return;
    }
  }
  for (auto it = embed_waiting_.begin(); it != embed_waiting_.end(); ++it) {
    if (it->key == key) {
      EmbedRequest r = std::move(*it);
      embed_waiting_.erase(it);
      EndEmbed(r, FinishReason::Cancel, "");
      return;
    }
  }
  for (auto& s : slots_) {
    if (s.run && s.run->req.key == key) {
      FinishRequest(key, FinishReason::Cancel);
      return;
    }
  }
  unmatched.insert(key);
}

void Engine::CloseAll() {
  for (auto& w : waiting_) EndWaiting(w, FinishReason::Cancel, "");
  waiting_.clear();
  for (auto& r : embed_waiting_) EndEmbed(r, FinishReason::Cancel, "");
  embed_waiting_.clear();
  for (auto& s : slots_) {
    if (s.run) FinishRequest(s.run->req.key, FinishReason::Cancel);
  }
}

EngineEvent& Engine::NewEvent(EventType type, int64_t id) {
  msg_->events.emplace_back();
  EngineEvent& e = msg_->events.back();
  e.type = type;
  e.id = id;
  return e;
}

void Engine::Post() {
  if (msg_->events.empty() && msg_->results.empty() && !msg_->closed) return;
  sink_(std::move(msg_));
  msg_ = std::make_unique<StepMessage>();
}

void Engine::PublishSnapshot() {
  std::lock_guard<std::mutex> lock(snap_mu_);
  EngineSnapshot& s = snapshot_;
  s.slots.resize(slots_.size());
  for (size_t i = 0; i < slots_.size(); ++i) {
    const Slot& slot = slots_[i];
    SlotSnapshot& o = s.slots[i];
    o.slot = slot.id;
    o.held_tokens = static_cast<int32_t>(slot.held.size());
    if (slot.run) {
      o.state = slot.run->decoding ? SlotSnapshot::Decode : SlotSnapshot::Prompt;
      o.request_id = slot.run->req.id;
      o.prompt_tokens = static_cast<int32_t>(slot.run->req.prompt.size());
      o.generated = slot.run->stats.generated;
    } else {
      o.state = SlotSnapshot::Idle;
      o.request_id = -1;
      o.prompt_tokens = 0;
      o.generated = 0;
    }
  }
  s.queued = static_cast<int32_t>(waiting_.size() + embed_waiting_.size());
  s.park.clear();
  for (const auto& e : park_.entries()) {
    s.park.push_back({static_cast<int32_t>(e.tokens.size()), e.state.size(), e.last_used_ms});
  }
  s.park_bytes = park_.bytes();
  s.park_budget = park_.budget();
  const ParkCounters& pc = park_.counters();
  s.hits = pc.hits;
  s.misses = pc.misses;
  s.evictions = pc.evictions;
  s.refused_low_ram = pc.refused_low_ram;
  s.prompt_tokens = totals_.prompt_tokens;
  s.reused_tokens = totals_.reused_tokens;
  s.prompt_computed = totals_.prompt_computed;
  s.generated = totals_.generated;
  s.steps = steps_;
  s.requests = totals_.requests;
  s.drafted = totals_.drafted;
  s.accepted = totals_.accepted;
  s.drafted_at = totals_.drafted_at;
  s.accepted_at = totals_.accepted_at;
  s.embedded = totals_.embedded;
}

EngineSnapshot Engine::Snapshot() const {
  std::lock_guard<std::mutex> lock(snap_mu_);
  return snapshot_;
}

}  // namespace strata
