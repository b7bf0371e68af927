#include "draft_mtp.h"

#include <algorithm>
#include <stdexcept>

#include "common.h"
#include "speculative.h"
#include "../src/llama-ext.h"  // llama_set_embeddings_nextn (staging API of the MTP heads)

namespace strata {

int32_t MtpLayersOf(const llama_model* model) { return model ? llama_model_n_layer_nextn(model) : 0; }

MtpDrafter::MtpDrafter(llama_model* model, llama_context* tgt, llama_context_params cp, int32_t n_seq,
                       int32_t draft_max, float p_min)
    : tgt_(tgt), n_seq_(n_seq), draft_max_(draft_max), drafted_(static_cast<size_t>(n_seq), false) {
  if (MtpLayersOf(model) <= 0) throw std::runtime_error("the model has no MTP layers (nextn_predict_layers)");
  // The head's context: the target's shape (sequences, context, batch), the MTP graph, reading the
  // target's hidden states (ctx_other).
  cp.ctx_type = LLAMA_CONTEXT_TYPE_MTP;
  cp.n_ctx = llama_n_ctx(tgt);
  cp.n_rs_seq = 0;
  cp.ctx_other = tgt;
  cp.embeddings = false;
  cp.pooling_type = LLAMA_POOLING_TYPE_NONE;
  ctx_ = llama_init_from_model(model, cp);
  if (!ctx_) throw std::runtime_error("failed to create the MTP head's context");
  mem_ = llama_get_memory(ctx_);
  common_params_speculative params;
  params.types = {COMMON_SPECULATIVE_TYPE_DRAFT_MTP};
  params.draft.n_max = draft_max;
  params.draft.n_min = 0;
  params.draft.p_min = p_min;
  params.draft.backend_sampling = false;  // the head's top tokens are read on the CPU
  params.draft.ctx_tgt = tgt;
  params.draft.ctx_dft = ctx_;
  spec_ = common_speculative_init(params, static_cast<uint32_t>(n_seq));
  if (!spec_) {
    llama_free(ctx_);
    throw std::runtime_error("failed to set up MTP drafting");
  }
  draft_max_ = std::max(1, common_speculative_n_max(spec_));
}

MtpDrafter::~MtpDrafter() {
  common_speculative_free(spec_);
  // The target stops producing hidden states for a head that is gone.
  llama_set_embeddings_nextn(tgt_, false, false);
  llama_free(ctx_);
}

void MtpDrafter::Align(int32_t seq, llama_pos pos) {
  const llama_pos max = llama_memory_seq_pos_max(mem_, seq);
  if (max < 0 || max == pos - 1) return;
  if (max >= pos && pos > 0 && llama_memory_seq_pos_min(mem_, seq) < pos) {
    llama_memory_seq_rm(mem_, seq, pos, -1);
    return;
  }
  // A gap (the target got KV without a decode) or nothing left before pos: start over from pos.
  llama_memory_seq_rm(mem_, seq, -1, -1);
}

bool MtpDrafter::Process(const llama_batch& batch) {
  if (!ok_ || batch.n_tokens <= 0 || !batch.token) return ok_;
  // Each sequence's first position in the batch: the head drops what it holds from there on.
  std::vector<llama_pos> first(static_cast<size_t>(n_seq_), -1);
  for (int32_t i = 0; i < batch.n_tokens; ++i) {
    const llama_seq_id s = batch.seq_id[i][0];
    if (s >= 0 && s < n_seq_ && first[static_cast<size_t>(s)] < 0) first[static_cast<size_t>(s)] = batch.pos[i];
  }
  for (int32_t s = 0; s < n_seq_; ++s) {
    if (first[static_cast<size_t>(s)] >= 0) Align(s, first[static_cast<size_t>(s)]);
  }
  ok_ = common_speculative_process(spec_, batch);
  return ok_;
}

void MtpDrafter::Draft(std::vector<MtpJob>& jobs) {
  if (!ok_ || jobs.empty()) return;
  for (MtpJob& job : jobs) {
    job.out.clear();
    const llama_pos n_past = static_cast<llama_pos>(job.held->size());
    Align(job.seq, n_past);
    common_speculative_draft_params& dp = common_speculative_get_draft_params(spec_, job.seq);
    dp.drafting = true;
    dp.n_max = job.max;
    dp.n_past = n_past;
    dp.id_last = job.last;
    dp.prompt = job.held;
    dp.result = &job.out;
  }
  common_speculative_draft(spec_);
  for (MtpJob& job : jobs) {
    common_speculative_draft_params& dp = common_speculative_get_draft_params(spec_, job.seq);
    dp.result = nullptr;
    dp.prompt = nullptr;
    if (static_cast<int32_t>(job.out.size()) > job.max) job.out.resize(static_cast<size_t>(job.max));
    if (!job.out.empty()) drafted_[static_cast<size_t>(job.seq)] = true;
  }
}

void MtpDrafter::Accept(int32_t seq, int32_t accepted) {
  if (seq < 0 || seq >= n_seq_ || !drafted_[static_cast<size_t>(seq)]) return;
  common_speculative_accept(spec_, seq, static_cast<uint16_t>(std::max(0, accepted)));
}

void MtpDrafter::Forget(int32_t seq) {
  if (seq >= 0 && seq < n_seq_) llama_memory_seq_rm(mem_, seq, -1, -1);
}

}  // namespace strata
