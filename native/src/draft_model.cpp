#include "draft_model.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "batch.h"
#include "sampling.h"
#include "serial_device.h"

namespace strata {

DraftModel::DraftModel(llama_model* model, llama_context* ctx, float p_min)
    : model_(model), ctx_(ctx), mem_(llama_get_memory(ctx)), p_min_(p_min),
      n_vocab_(llama_vocab_n_tokens(llama_model_get_vocab(model))),
      n_batch_(static_cast<int32_t>(llama_n_batch(ctx))),
      batch_(llama_batch_init(static_cast<int32_t>(llama_n_batch(ctx)), 0, 1)),
      held_(llama_n_seq_max(ctx)) {}

DraftModel::~DraftModel() {
  llama_batch_free(batch_);
  llama_free(ctx_);
  llama_model_free(model_);
}

void DraftModel::Forget(int32_t seq) {
  llama_memory_seq_rm(mem_, seq, -1, -1);
  held_[static_cast<size_t>(seq)].clear();
}

bool DraftModel::Decode() {
  const auto t0 = std::chrono::steady_clock::now();
  const int32_t rc = DecodeAlone(ctx_, batch_);
  decode_ms_ += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  batch_.n_tokens = 0;
  return rc == 0;
}

bool DraftModel::Draft(std::vector<DraftJob>& jobs) {
  // Per job: what of its sequence is still to read, and the draft token to decode next (-1: none).
  struct State { size_t next = 0, end = 0; bool drafting = false; llama_token tok = -1; int32_t idx = -1; };
  std::vector<State> st(jobs.size());
  for (size_t j = 0; j < jobs.size(); ++j) {
    DraftJob& job = jobs[j];
    State& s = st[j];
    job.out.clear();
    std::vector<llama_token>& have = held_[static_cast<size_t>(job.seq)];
    const std::vector<llama_token>& want = *job.held;
    s.end = want.size() + (job.last >= 0 ? 1 : 0);
    s.drafting = job.max > 0 && job.last >= 0;
    auto at = [&](size_t i) { return i < want.size() ? want[i] : job.last; };
    size_t common = 0;
    while (common < have.size() && common < s.end && have[common] == at(common)) ++common;
    // The last token's logits start the draft: read it again if the context already holds it.
    if (s.drafting && common == s.end) --common;
    if (common < have.size()) {
      if (!llama_memory_seq_rm(mem_, job.seq, static_cast<llama_pos>(common), -1)) {
        llama_memory_seq_rm(mem_, job.seq, -1, -1);
        common = 0;
      }
      have.resize(common);
    }
    s.next = common;
  }
  // Each decode carries every job's pending draft token and as much catch-up as fits; the logits
  // of a job's last token (or last draft token) give its next draft token.
  for (;;) {
    for (size_t j = 0; j < jobs.size(); ++j) {
      State& s = st[j];
      if (s.tok < 0) continue;
      std::vector<llama_token>& have = held_[static_cast<size_t>(jobs[j].seq)];
      BatchAdd(batch_, s.tok, static_cast<llama_pos>(have.size()), jobs[j].seq, true);
      have.push_back(s.tok);
      s.idx = batch_.n_tokens - 1;
      s.tok = -1;
    }
    for (size_t j = 0; j < jobs.size() && batch_.n_tokens < n_batch_; ++j) {
      State& s = st[j];
      const DraftJob& job = jobs[j];
      std::vector<llama_token>& have = held_[static_cast<size_t>(job.seq)];
      for (; s.next < s.end && batch_.n_tokens < n_batch_; ++s.next) {
        const llama_token tok = s.next < job.held->size() ? (*job.held)[s.next] : job.last;
        const bool final = s.next + 1 == s.end && s.drafting;
        BatchAdd(batch_, tok, static_cast<llama_pos>(s.next), job.seq, final);
        have.push_back(tok);
        if (final) s.idx = batch_.n_tokens - 1;
      }
    }
    if (batch_.n_tokens == 0) return true;
    if (!Decode()) {
      for (const DraftJob& job : jobs) {
        llama_memory_seq_rm(mem_, job.seq, -1, -1);
        held_[static_cast<size_t>(job.seq)].clear();
      }
      for (DraftJob& job : jobs) job.out.clear();
      return false;
    }
    for (size_t j = 0; j < jobs.size(); ++j) {
      State& s = st[j];
      if (s.idx < 0) continue;
      const float* logits = llama_get_logits_ith(ctx_, s.idx);
      s.idx = -1;
      const llama_token tok = ArgmaxToken(logits, n_vocab_);
      if (p_min_ > 0) {
        const float max = logits[tok];
        double sum = 0;
        for (int32_t v = 0; v < n_vocab_; ++v) sum += std::exp(static_cast<double>(logits[v] - max));
        if (1.0 / sum < p_min_) { s.drafting = false; continue; }
      }
      jobs[j].out.push_back(tok);
      if (static_cast<int32_t>(jobs[j].out.size()) < jobs[j].max) s.tok = tok;
      else s.drafting = false;
    }
  }
}

}  // namespace strata
