// The inference engine: one thread owns the llama_context and runs the batch loop over the
// slots (one llama sequence each). Other threads only enqueue commands and read published
// copies (Snapshot, DrainTraces). Events leave once per step through the sink.
//
// Files: engine.cpp (thread, command queue, snapshot), engine_admit.cpp (admission, slot
// choice, parking and restore, choices), engine_step.cpp (batch, decode, finishing),
// engine_emit.cpp (sampling, speculative verification, emitting tokens), engine_draft.cpp
// (speculative drafts), engine_embed.cpp (embedding models), engine_session.cpp (session files),
// engine_pool.cpp (the KV pool the slots share, without a context per slot).
#pragma once
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "cpu_threadpool.h"
#include "draft_model.h"
#include "draft_head.h"
#include "draft_ngram_llama.h"
#include "draft_prediction.h"
#include "engine_options.h"
#include "engine_snapshot.h"
#include "llama-cpp.h"
#include "llama.h"
#include "park_store.h"
#include "request.h"
#include "sampling.h"
#include "session_file.h"
#include "session_writer.h"
#include "text_stream.h"
#include "trace.h"
#include "vision.h"

namespace strata {

// llama-cpp.h has smart pointers for models, contexts and samplers, none for batches.
struct BatchDeleter {
  void operator()(llama_batch* b) const {
    llama_batch_free(*b);
    delete b;
  }
};
using BatchPtr = std::unique_ptr<llama_batch, BatchDeleter>;

class Engine {
 public:
  // Receives each step's message on the engine thread; must not block for long.
  using Sink = std::function<void(std::unique_ptr<StepMessage>)>;

  // Takes ownership of model, ctx and its thread pools (freed in the destructor, after the thread
  // ended), and of the draft model when there is one (null otherwise).
  Engine(llama_model* model, llama_context* ctx, CpuThreadpools pools, std::unique_ptr<DraftModel> draft,
         const EngineConfig& cfg, const ModelInfo& info, Sink sink);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Before Start: the projector images are evaluated with (null: the model reads text only).
  void SetVision(std::shared_ptr<Vision> vision) { vision_ = std::move(vision); }
  // Before Start: drafting from a head that reads the model's hidden states (its MTP head, an EAGLE-3
  // or DFlash drafter; null: none); shares the target's thread pools.
  void SetHead(std::shared_ptr<HeadDrafter> head) { head_ = std::move(head); }

  void Start();

  // Any thread. Requests must be validated already; ids unique among live requests.
  void Submit(GenerateRequest req);
  void SubmitEmbed(EmbedRequest req);
  void Cancel(uint64_t key);
  // `meta` is the server's description of the session, stored in the file as it is.
  void SaveSession(uint64_t ticket, std::string path, std::vector<llama_token> tokens, std::string identity,
                   std::string meta);
  void LoadSession(uint64_t ticket, std::string path, std::string identity);
  // Ends every request with 'cancel', posts a message with closed = true, and ends the thread.
  // An exception on the engine thread (std::bad_alloc or any other) ends every request with
  // 'error' and the reason instead, and posts closed = true with `fatal` set.
  void RequestClose();
  // Ends the thread without posting anything (process teardown). Joins.
  void StopSilently();
  void Join();

  EngineSnapshot Snapshot() const;
  std::vector<StepTraceRec> DrainStepTraces() { return step_traces_.Drain(); }
  std::vector<RequestTraceRec> DrainRequestTraces() { return request_traces_.Drain(); }

 private:
  struct Command {
    enum Kind { Submit, Embed, SaveSession, LoadSession, Close } kind = Submit;
    GenerateRequest req;
    EmbedRequest embed;
    double t_ms = 0;
    uint64_t ticket = 0;
    std::string path, identity, meta;
    std::vector<llama_token> tokens;
  };
  struct Waiting {
    GenerateRequest req;
    uint64_t order = 0;
    double queued_ms = 0;
  };
  // What the choices of one request (n > 1) share until the last of them ends with its 'done'.
  struct Group {
    int32_t live = 0;
    std::vector<ChoiceEnd> ends;  // by choice
    FinishReason failed = FinishReason::Stop;  // Error or Cancel once any choice ended so
    std::string error;
    RequestStats stats;           // summed over the choices (prompt figures from choice 0)
    RequestTraceRec trace;        // choice 0's
    double t_prompt_done = -1;
  };
  // A request (or one choice of it) that holds a slot. Engine thread only.
  struct Active {
    GenerateRequest req;
    int32_t choice = 0;
    std::shared_ptr<Group> group;  // n > 1 only
    bool forking = false;       // a choice > 0 waiting for choice 0 to read the prompt
    size_t n_read = 0;          // prompt tokens whose KV is in the slot
    bool decoding = false;      // prompt done; `pending` is the last sampled token
    llama_token pending = -1;   // sampled, emitted, not yet in the KV
    std::unique_ptr<SeqSampler> sampler;
    TextStream text;
    RequestStats stats;
    RequestTraceRec trace;
    double t_admitted = 0, t_prompt_done = 0;
    // This step's plan.
    int32_t chunk = 0;          // prompt tokens in the batch
    int32_t logits_at = -1;     // batch index whose logits this request samples
    std::vector<llama_token> draft;  // speculative tokens after `pending` in the batch
    int32_t draft_predicted = 0;     // this step's draft tokens from the request's prediction (the first ones)
    std::unique_ptr<PredictionCursor> prediction;  // with a prediction, made at its first draft
    bool ngram_begun = false;   // llama.cpp's n-gram drafter has begun this request's sequence
    int32_t event = -1;         // this step's tokens event in msg_ (index), -1 none yet
    // A recurrent model: the position (req.shared_prefix) where a chunk ends and a copy of the
    // sequence is parked, or 0.
    size_t share_at = 0;
    // Shared pool: the order of admission (the latest ends first when the pool is full), and
    // whether the prompt waits this step for cells the others hold.
    uint64_t admit_order = 0;
    bool pool_wait = false;
  };
  struct Checkpoint {
    std::vector<llama_token> tokens;  // the state is the one after these
    std::vector<uint8_t> state;
  };
  struct Slot {
    int32_t id = 0;
    std::vector<llama_token> held;  // tokens whose KV the sequence holds, positions 0..n-1
    uint64_t last_used = 0;
    std::unique_ptr<Active> run;
    // Shared pool: the first `shared` positions are cells of slot `base` (llama_memory_seq_cp
    // shares cells in a unified KV), counted there, not here. -1: none.
    int32_t base = -1;
    size_t shared = 0;
    // A recurrent model's states (llama.cpp's partial state: the recurrent layers') right after the
    // slot's last prompts, oldest first (kMaxCheckpoints at most): a recurrent state cannot be cut
    // back, so a request that leaves what the slot holds goes back to the latest of them it keeps
    // whole (an agent's next turn, its last answer rendered anew; an edited or rewritten later
    // message) instead of reading all again.
    std::vector<Checkpoint> checkpoints;
  };

  // engine.cpp
  void Enqueue(Command c);
  void Run();
  void RunLoop();
  void FailEverything(const std::string& reason);
  bool WaitForWork(std::deque<Command>& cmds, std::vector<uint64_t>& cancels);
  void GatherBurst(std::unique_lock<std::mutex>& lock);
  void TakeSaved();  // the session writer's finished saves into msg_
  void HandleCommands(std::deque<Command>& cmds, std::vector<uint64_t>& cancels);
  void CancelRequest(uint64_t key, std::set<uint64_t>& unmatched);
  void CloseAll();
  void Post();
  void PublishSnapshot();
  double NowMs() const;

  // engine_admit.cpp
  void AdmitWaiting();  // the direct-addon fallback queue (see its comment); the server admits only into free slots
  void Admit(Waiting w, Slot& slot, size_t reuse, bool restored);
  void AdmitChoices(Slot& primary, const std::vector<Slot*>& others);
  std::vector<Slot*> SpareSlots(const Slot& taken, size_t n);
  void ForkChoices(Slot& primary);
  size_t ChooseAndPrepareSlot(const GenerateRequest& req, int* slot_out, bool* restored);
  size_t Restore(Slot& slot, std::list<ParkedConversation>::iterator it, size_t keep, bool* restored);
  void MaybePark(Slot& slot, size_t keep);
  // Cuts the slot's sequence to its first `keep` tokens; returns what it holds then: `keep`, or
  // for a recurrent state that cannot be cut there its latest checkpoint within `keep`, or 0 (started over).
  size_t TrimSlot(Slot& slot, size_t keep);
  // The slot's latest checkpoint whose tokens it holds and `keep` keeps (null: none).
  const Checkpoint* CheckpointWithin(const Slot& slot, size_t keep) const;
  bool RestoreCheckpoint(Slot& slot, size_t keep);
  void SaveCheckpoint(Slot& slot);
  // What TrimSlot(slot, keep) would keep, without cutting.
  size_t Keepable(const Slot& slot, size_t keep) const;
  // A copy of the slot's sequence goes to the park unless an entry holds it already; `shared`: a
  // recurrent model's slot holds exactly a prompt's shared start (the entry stays when restored).
  void ParkCopy(const Slot& slot, bool shared);
  // Copies sequence src's KV to dst (whose KV must be empty) at once; false when it could not.
  bool CopySequence(int32_t src, int32_t dst);
  bool CaptureState(int32_t seq, StateBuffer& out);
  // Free RAM that copies to host memory (the park, checkpoints) never go below.
  uint64_t RamFloorBytes() const { return static_cast<uint64_t>(cfg_.free_ram_floor_mib * 1024.0 * 1024.0); }

  // engine_pool.cpp (shared pool only; no-ops with a context per slot)
  // Before a step's batch: room for every decoder's token, prompts that fit read, the rest wait;
  // idle slots' conversations are parked to make room, and when nothing can go on the latest
  // admitted request ends (context_full).
  void ReservePool();
  // A decode found no KV cells (llama_decode returned 1): the latest request in the batch ends.
  void PoolOverflow();
  size_t PoolUsed() const;
  // Whether `need` more cells fit once idle slots other than `keep` are parked; parks them as needed.
  bool PoolMakeRoom(size_t need, const Slot* keep);
  // The slot's KV was cut to `keep` positions (0: cleared): what others share of it shrinks too.
  void PoolCut(Slot& slot, size_t keep);
  // `to` (cleared) now holds a copy of `from`'s sequence, sharing its cells.
  void PoolCopied(Slot& to, const Slot& from);
  void SyncShares();
  size_t EvictIdle(size_t need, const Slot* keep);
  bool EndLatestForPool(bool in_batch_only);

  // engine_step.cpp
  bool Step();
  // Evaluates the image each prompt-reading sequence has reached (its KV, as one unit); true if any.
  bool EvalImages();
  void PlanBatch();
  void FailBatch(int32_t rc);
  void AfterDecode(double step_t, double decode_ms);
  void Finish(Slot& slot, FinishReason reason, const std::string& error = "", bool stopped_by_string = false);
  // Ends every sequence of the request (all its choices) that still holds a slot.
  void FinishRequest(uint64_t key, FinishReason reason, const std::string& error = "");
  void EndWaiting(Waiting& w, FinishReason reason, const std::string& error);

  // engine_emit.cpp
  void SampleAndEmit(Slot& slot);
  // Emits one sampled token; false when a stop rule ended the sequence (Finish was called).
  bool EmitToken(Slot& slot, llama_token tok, int32_t logits_idx);
  std::string Piece(llama_token tok, bool special);

  // engine_draft.cpp
  void PrepareDrafts();
  // At most `k` draft tokens for the decoding sequence of `s`: what its answer budget, its context
  // and its KV's rollback leave.
  int32_t DraftCap(const Slot& s, int32_t k) const;
  void PrepareHeadDrafts();  // engine_draft_head.cpp: the head's drafts, after PrepareDrafts
  void OutputEveryRowForHead();  // engine_step.cpp: the head reads the right states over per-slot KV

  // engine_embed.cpp
  bool StepEmbeddings();
  void EndEmbed(EmbedRequest& r, FinishReason reason, const std::string& error);

  // engine_session.cpp
  void DoSaveSession(Command& c);
  void DoLoadSession(Command& c);
  bool LoadIntoSlot(Slot& slot, const SessionData& d, const std::string& path, SessionPhases* phases);
  std::string ParkFileState(const SessionData& d, bool shared, SessionPhases* phases);
  // Free slots the queued requests will take at the next admission (their choices counted).
  size_t QueuedSlots() const;
  SessionModelId ModelId(const std::string& identity) const;

  EngineEvent& NewEvent(EventType type, int64_t id);

  // Owned; freed in the destructor in this order: samplers (slots_), batch_, ctx_, pools_, model_.
  llama_model_ptr model_;
  llama_context_ptr ctx_;
  CpuThreadpools pools_;
  const llama_vocab* vocab_;
  llama_memory_t mem_;
  const EngineConfig cfg_;
  const ModelInfo info_;
  const int32_t ctx_per_slot_;
  const bool recurrent_;  // the model has recurrent layers (checkpoints after prompts, rollback bounds)
  // Draft tokens a sequence's KV can take back: unbounded, or for a recurrent state the snapshots
  // llama.cpp keeps (n_rs_seq; 0: none, so no drafts).
  const int32_t rollback_max_;
  Sink sink_;
  const std::chrono::steady_clock::time_point t0_;

  std::thread thread_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Command> commands_;   // guarded by mu_
  std::vector<uint64_t> cancels_;  // request keys; guarded by mu_; handled before commands
  bool close_requested_ = false;   // guarded by mu_
  bool stop_silently_ = false;     // guarded by mu_
  std::vector<CommandResult> saved_;  // the writer's finished saves, for the next message; guarded by mu_
  // After mu_, cv_ and saved_, which its results reach; reset first in the destructor.
  std::unique_ptr<SessionWriter> writer_;

  std::unique_ptr<DraftModel> draft_;  // engine thread only
  std::unique_ptr<LlamaNgramDrafter> ngram_;  // spec.ngram with one of llama.cpp's kinds; engine thread only
  std::shared_ptr<Vision> vision_;     // set before Start; Eval on the engine thread only
  std::shared_ptr<HeadDrafter> head_;  // set before Start; engine thread only

  // Engine thread only.
  std::vector<Slot> slots_;
  std::vector<Waiting> waiting_;
  std::deque<EmbedRequest> embed_waiting_;  // embedding models: requests in arrival order
  uint64_t order_ = 0;
  uint64_t tick_ = 0;
  uint64_t admits_ = 0;
  ParkStore park_;
  BatchPtr batch_;
  std::unique_ptr<StepMessage> msg_;
  std::vector<char> piece_;
  std::vector<size_t> prompt_order_;
  EngineSnapshot totals_;  // totals and counters kept here, copied into the snapshot
  uint64_t steps_ = 0;
  // Test hook (STRATA_TEST_ENGINE_THROW=bad_alloc): the first step with a request throws std::bad_alloc.
  bool test_throw_ = false;
  double sample_ms_ = 0, detok_ms_ = 0;  // this step's
  int32_t step_drafted_ = 0, step_accepted_ = 0;  // this step's
  double draft_ms_ = 0;                           // this step's

  mutable std::mutex snap_mu_;
  EngineSnapshot snapshot_;  // guarded by snap_mu_

  TraceRing<StepTraceRec> step_traces_;
  TraceRing<RequestTraceRec> request_traces_;
};

}  // namespace strata
