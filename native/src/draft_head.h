// Drafts from a head that reads the target's hidden states, through llama.cpp's common_speculative:
// the model's own multi-token-prediction (MTP, NextN) head, or a drafter GGUF made for the target (an
// EAGLE-3 head, a DFlash or DSpark block drafter). A second context (of the same model for MTP, of the
// drafter's otherwise) holds the head's KV per target sequence (same seq ids) and reads the target's
// hidden states after every target decode; drafting runs the head for every drafting sequence at once.
// The head's KV follows the target's: before each target batch and each draft, what the head holds
// past the target's position is dropped (rejected drafts, a reused prefix), and a sequence whose KV
// the target got without a decode (a session or prefix-cache file, an image) starts the head over
// from the next token (drafts then see less context, outputs are unchanged: the target verifies
// every draft). Engine thread only.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "llama.h"

struct common_speculative;

namespace strata {

enum class HeadKind { kNone, kMtp, kEagle3, kDFlash, kDSpark };

// "mtp", "eagle3", "dflash", "dspark" ("" for kNone).
const char* HeadKindName(HeadKind kind);

// What a drafter GGUF is, from its header: kEagle3 (architecture eagle3), kDFlash or kDSpark
// (architecture dflash, DSpark with its Markov head), kNone for anything else (a plain draft model);
// fc_inputs: the width of the target features its fusion layer reads (fc.weight's rows).
struct DrafterFile {
  HeadKind kind = HeadKind::kNone;
  int64_t fc_inputs = 0;
  bool confidence = true;  // DSpark: it has a confidence head (dflash.has_confidence_head), which p_min needs
};
// Throws std::runtime_error when the file is not a readable GGUF.
DrafterFile ReadDrafterFile(const std::string& path);

struct HeadJob {
  int32_t seq = 0;
  const std::vector<llama_token>* held = nullptr;  // the tokens whose KV the target holds
  llama_token last = -1;                          // the token the target decodes next
  int32_t max = 0;                                // draft tokens wanted
  std::vector<llama_token> out;
};

class HeadDrafter {
 public:
  // The model's own MTP head: a context of type MTP over `target` beside `tgt` (its parameters
  // `cp`, its CPU thread pools). Throws std::runtime_error when the model has no MTP layers or the
  // context cannot be made.
  HeadDrafter(llama_model* target, llama_context* tgt, llama_context_params cp, int32_t n_seq, int32_t draft_max,
              float p_min);
  // A drafter GGUF (`file`: kEagle3, kDFlash or kDSpark), already loaded: the drafter owns
  // `drafter` from here on, and frees it even when this throws (a drafter made for another target:
  // its hidden size or the layers it reads do not match, or the target's architecture does not give
  // the layers' inputs).
  HeadDrafter(const DrafterFile& file, llama_model* drafter, llama_context* tgt, llama_context_params cp,
              int32_t n_seq, int32_t draft_max, float p_min);
  ~HeadDrafter();
  HeadDrafter(const HeadDrafter&) = delete;
  HeadDrafter& operator=(const HeadDrafter&) = delete;

  // One throwaway round at load, as the target's warm-up: two tokens through the target and the
  // head, then a draft, then both forget them. The first run of the head's graph pays its one-time
  // costs (buffers, a GPU backend's shader pipelines) before any request.
  void Warmup(llama_token token);

  // After every decode of the target: the head reads the batch with the target's hidden states.
  // False when the head's decode failed (drafting stops for good: decoding goes on without it).
  bool Process(const llama_batch& batch);

  // Drafts up to job.max tokens for each job.
  void Draft(std::vector<HeadJob>& jobs);

  // After a sequence verified a draft of this drafter: how many of its tokens the target kept.
  void Accept(int32_t seq, int32_t accepted);

  // Drops what the head holds of a sequence (the target dropped it).
  void Forget(int32_t seq);

  // The target copied the first `n` positions of `src` into `dst` (a prefix another slot read, or
  // a request's other choices): the MTP head copies what it holds of them too, so dst drafts with
  // that context instead of starting over. Its entry at n then reads src's last hidden state, not
  // the one at n - 1 (llama.cpp keeps that per sequence, out of reach): one entry off, drafts
  // only (the target verifies them). The other kinds start dst over.
  void CopyPrefix(int32_t src, int32_t dst, llama_pos n);

  llama_context* ctx() const { return ctx_; }
  bool ok() const { return ok_; }
  int32_t draft_max() const { return draft_max_; }
  HeadKind kind() const { return kind_; }

 private:
  // Makes the context and common_speculative's state; frees what it made when it throws.
  void Init(llama_model* model, llama_context_params cp, float p_min);
  // Throws when a drafter GGUF was not made for this target (it would abort in llama.cpp).
  void CheckFits(const DrafterFile& file, const llama_model* drafter) const;
  // Drops what the head holds of `seq` from `pos` on; a gap before `pos` clears the sequence.
  void Align(int32_t seq, llama_pos pos);
  // EAGLE-3 before a target batch of `seq` from `pos`: its entry at pos - 1 pairs the token at pos
  // with the hidden state at pos - 1, which the drafter kept from the batch before (its deferred
  // position, mirrored in deferred_); it holds up to pos - 2 then, else the sequence starts over.
  void AlignDeferred(int32_t seq, llama_pos pos);

  HeadKind kind_;
  llama_context* tgt_;
  llama_model* owned_ = nullptr;  // the drafter GGUF's model (null for the MTP head)
  llama_context* ctx_ = nullptr;
  llama_memory_t mem_ = nullptr;
  common_speculative* spec_ = nullptr;
  int32_t n_seq_;
  int32_t draft_max_;
  // EAGLE-3 only, per seq, as common_speculative keeps them: the position whose entry waits for the
  // next token (the last one read, moved back by accept() to the last draft kept), and where the
  // last batch read of the sequence began and how many tokens it had.
  std::vector<llama_pos> deferred_, batch_first_;
  std::vector<int32_t> batch_rows_;
  std::vector<int32_t> layers_;  // the target layers whose inputs the drafter reads
  std::vector<bool> drafted_;  // per seq: the head drafted for it (accept() then has a draft to follow)
  bool ok_ = true;
};

// The number of MTP layers the model file declares (<arch>.nextn_predict_layers), 0 when none.
int32_t MtpLayersOf(const llama_model* model);

}  // namespace strata
