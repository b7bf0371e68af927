// A draft model with the target's vocabulary: it keeps its own KV per target sequence (same seq
// ids) and proposes draft tokens for many sequences at once, each draft round one batched decode.
// Engine thread only.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "llama.h"

namespace strata {

struct DraftJob {
  int32_t seq = 0;
  // The target sequence's tokens: the KV it holds, then the token it will decode next.
  const std::vector<llama_token>* held = nullptr;
  llama_token last = -1;  // -1: no next token (the sequence only read prompt tokens)
  int32_t max = 0;        // draft tokens wanted (0: only catch up)
  std::vector<llama_token> out;
};

class DraftModel {
 public:
  // Takes ownership of model and ctx (same n_seq_max and n_batch as the target's).
  DraftModel(llama_model* model, llama_context* ctx, float p_min);
  ~DraftModel();
  DraftModel(const DraftModel&) = delete;
  DraftModel& operator=(const DraftModel&) = delete;

  // Brings each job's sequence up to date (reads what the target read since: batched, in
  // n_batch chunks), then drafts up to job.max tokens each, greedily, stopping a job's draft at a
  // token the draft model gives probability below p_min. False when a decode failed (the jobs'
  // sequences are dropped and get no draft).
  bool Draft(std::vector<DraftJob>& jobs);

  // Drops a sequence the target dropped (a shared pool gives its cells to others).
  void Forget(int32_t seq);

  // Ms spent in the draft model's decodes so far (for traces).
  double decode_ms() const { return decode_ms_; }

 private:
  bool Decode();

  llama_model* model_;
  llama_context* ctx_;
  llama_memory_t mem_;
  const float p_min_;
  const int32_t n_vocab_;
  const int32_t n_batch_;
  llama_batch batch_;
  std::vector<std::vector<llama_token>> held_;  // per seq: tokens whose KV the draft context holds
  double decode_ms_ = 0;
};

}  // namespace strata
