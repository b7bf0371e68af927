// Drafts from the model's own multi-token-prediction (MTP, NextN) head through llama.cpp's
// common_speculative: a second context over the same model (LLAMA_CONTEXT_TYPE_MTP) holds the
// head's KV per target sequence (same seq ids) and reads the target's hidden states after every
// target decode; drafting runs the head a token at a time for every drafting sequence at once.
// The head's KV follows the target's: before each target batch and each draft, what the head holds
// past the target's position is dropped (rejected drafts, a reused prefix), and a sequence whose
// KV the target got without a decode (a session or prefix-cache file, an image) starts the head
// over from the next token (drafts then see less context, outputs are unchanged: the target
// verifies every draft). Engine thread only.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "llama.h"

struct common_speculative;

namespace strata {

struct MtpJob {
  int32_t seq = 0;
  const std::vector<llama_token>* held = nullptr;  // the tokens whose KV the target holds
  llama_token last = -1;                          // the token the target decodes next
  int32_t max = 0;                                // draft tokens wanted
  std::vector<llama_token> out;
};

class MtpDrafter {
 public:
  // Makes the MTP context beside `tgt` (its parameters `cp`, its CPU thread pools) and the
  // common_speculative state for `n_seq` sequences. Throws std::runtime_error when the model has no
  // MTP layers or the context cannot be made.
  MtpDrafter(llama_model* model, llama_context* tgt, llama_context_params cp, int32_t n_seq, int32_t draft_max,
             float p_min);
  ~MtpDrafter();
  MtpDrafter(const MtpDrafter&) = delete;
  MtpDrafter& operator=(const MtpDrafter&) = delete;

  // After every decode of the target: the head reads the batch with the target's hidden states.
  // False when the head's decode failed (drafting stops for good: decoding goes on without it).
  bool Process(const llama_batch& batch);

  // Drafts up to job.max tokens for each job.
  void Draft(std::vector<MtpJob>& jobs);

  // After a sequence verified a draft of this drafter: how many of its tokens the target kept.
  void Accept(int32_t seq, int32_t accepted);

  // Drops what the head holds of a sequence (the target dropped it).
  void Forget(int32_t seq);

  llama_context* ctx() const { return ctx_; }
  bool ok() const { return ok_; }
  int32_t draft_max() const { return draft_max_; }

 private:
  // Drops what the head holds of `seq` from `pos` on; a gap before `pos` clears the sequence.
  void Align(int32_t seq, llama_pos pos);

  llama_context* tgt_;
  llama_context* ctx_ = nullptr;
  llama_memory_t mem_ = nullptr;
  common_speculative* spec_ = nullptr;
  int32_t n_seq_;
  int32_t draft_max_;
  std::vector<bool> drafted_;  // per seq: the head drafted for it (accept() then has a draft to follow)
  bool ok_ = true;
};

// The number of MTP layers the model file declares (<arch>.nextn_predict_layers), 0 when none.
int32_t MtpLayersOf(const llama_model* model);

}  // namespace strata
