// Embedding models: each step packs waiting inputs (of one request or many, in arrival order)
// into one batch, one sequence per input, whole inputs only (an encoder reads an input at once);
// llama pools each sequence by the model's pooling type and the engine normalises the vectors
// (rerankers: pooling 'rank', the classifier's scores as they are).
//
// Batch == single: ggml's CPU flash attention reads a ubatch of fewer than 64 tokens with another
// kernel (F16 queries, one row at a time) than a longer one (F32 tiles), and the two differ by
// ~1e-3 in a unit vector: a short query embedded alone would not match the same text embedded
// among chunks. So an encoder's step shorter than that is padded with one more sequence (a free
// slot's id, masked from the others, its vector dropped), and every input goes through the tiled
// kernel. (With one slot every step holds one input, so batch == single holds without it.)
// Engine thread only.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <set>

#include "batch.h"
#include "engine.h"
#include "serial_device.h"

namespace strata {

namespace {
// GGML_FA_TILE_Q in ggml-cpu/common.h: shorter ubatches take the one-row flash-attention kernel.
constexpr int32_t kFlashAttnTileTokens = 64;
}  // namespace

bool Engine::StepEmbeddings() {
  if (embed_waiting_.empty()) return false;
  struct Item { EmbedRequest* req; size_t index; int32_t seq; };
  std::vector<Item> items;
  batch_->n_tokens = 0;
  bool full = false;
  const double now = NowMs();
  for (EmbedRequest& r : embed_waiting_) {
    while (!full && r.next < r.inputs.size()) {
      const std::vector<llama_token>& in = r.inputs[r.next];
      if (static_cast<int32_t>(items.size()) == cfg_.slots || batch_->n_tokens + static_cast<int32_t>(in.size()) > cfg_.batch) {
        full = true;
        break;
      }
      const int32_t seq = static_cast<int32_t>(items.size());
      for (size_t k = 0; k < in.size(); ++k) BatchAdd(*batch_, in[k], static_cast<llama_pos>(k), seq, true);
      items.push_back({&r, r.next, seq});
      ++r.next;
      if (r.admitted_ms < 0) r.admitted_ms = now;
    }
    if (full) break;
  }
  if (items.empty()) return false;
  int32_t input_tokens = batch_->n_tokens;
  if (info_.flash_attn && !mem_ && batch_->n_tokens < kFlashAttnTileTokens && kFlashAttnTileTokens <= cfg_.batch && cfg_.slots > 1) {
    // The pad needs a sequence id of its own: a step that holds every slot's gives its last input back.
    if (static_cast<int32_t>(items.size()) == cfg_.slots) {
      Item last = items.back();
      items.pop_back();
      batch_->n_tokens -= static_cast<int32_t>(last.req->inputs[last.index].size());
      --last.req->next;
    }
    const int32_t pad_seq = static_cast<int32_t>(items.size());
    const llama_token pad = items.front().req->inputs[items.front().index].front();
    input_tokens = batch_->n_tokens;
    for (int32_t k = input_tokens; k < kFlashAttnTileTokens; ++k) BatchAdd(*batch_, pad, static_cast<llama_pos>(k - input_tokens), pad_seq, true);
  }
  StepTraceRec tr;
  tr.step = steps_;
  tr.t = now;
  tr.prompt_tokens = input_tokens;
  tr.sequences = static_cast<int32_t>(items.size());
  const auto t0 = std::chrono::steady_clock::now();
  const int32_t rc = DecodeAlone(ctx_.get(), *batch_);
  tr.decode_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  steps_++;
  std::string error;
  if (rc != 0) error = "llama_decode failed for the embedding batch (code " + std::to_string(rc) + ")";
  for (const Item& it : items) {
    EmbedRequest& r = *it.req;
    if (!error.empty()) continue;
    const float* v = llama_get_embeddings_seq(ctx_.get(), it.seq);
    if (!v) {
      error = "the model gave no pooled embedding";
      continue;
    }
    EngineEvent& e = NewEvent(EventType::Embedding, r.id);
    e.index = static_cast<int32_t>(it.index);
    e.vector.assign(v, v + info_.n_embd);
    if (r.normalize && info_.pooling != "rank") {  // a reranker's output is a score, not a direction
      double sum = 0;
      for (float x : e.vector) sum += static_cast<double>(x) * x;
      const double norm = std::sqrt(sum);
      if (norm > 0) for (float& x : e.vector) x = static_cast<float>(x / norm);
    }
    ++r.done;
    totals_.embedded++;
  }
  if (mem_) llama_memory_clear(mem_, true);  // causal embedding models: nothing is kept
  step_traces_.Push(tr);
  // Requests whose inputs are all done (or that failed) end now, in order.
  std::set<uint64_t> failed_keys;
  if (!error.empty()) for (const Item& it : items) failed_keys.insert(it.req->key);
  for (auto it = embed_waiting_.begin(); it != embed_waiting_.end();) {
    const bool failed = failed_keys.count(it->key) > 0;
    if (failed || it->done == it->inputs.size()) {
      EmbedRequest r = std::move(*it);
      it = embed_waiting_.erase(it);
      EndEmbed(r, failed ? FinishReason::Error : FinishReason::Stop, failed ? error : "");
    } else {
      ++it;
    }
  }
  return true;
}

void Engine::EndEmbed(EmbedRequest& r, FinishReason reason, const std::string& error) {
  EngineEvent& e = NewEvent(EventType::Done, r.id);
  e.finish = reason;
  e.error = error;
  e.stats.prompt_tokens = r.tokens;
  e.stats.prompt_ms = NowMs() - r.queued_ms;
  RequestTraceRec tr;
  tr.id = r.id;
  tr.queued = r.queued_ms;
  tr.admitted = r.admitted_ms;
  tr.finished = NowMs();
  request_traces_.Push(std::move(tr));
  totals_.requests++;
  totals_.prompt_tokens += static_cast<uint64_t>(r.tokens);
}

}  // namespace strata
