#include "draft_head.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <stdexcept>

#include "common.h"
#include "gguf.h"
#include "speculative.h"
#include "../src/llama-ext.h"  // hidden-state extraction and drafter metadata (staging APIs of the heads)
#include "serial_device.h"

namespace strata {

namespace {

// The target architectures whose graphs in the pinned llama.cpp record each layer's input, which
// EAGLE-3 and DFlash drafters read (any other aborts the process at its first decode).
constexpr const char* kLayerInputArchs[] = {
    "llama",  "qwen3",     "qwen3moe", "qwen3next", "qwen35",      "qwen35moe", "qwen4exp",   "gpt-oss",
    "lfm2",   "gemma4",    "deepseek4", "minimax-01", "minimax-m2", "bailingmoe3", "nemotron_h", "nanbeige",
    "muse-glimmer",
};

std::string MetaString(const llama_model* model, const char* key) {
  char buf[128] = {};
  return llama_model_meta_val_str(model, key, buf, sizeof buf) >= 0 ? std::string(buf) : std::string();
}

common_speculative_type SpecType(HeadKind kind) {
  switch (kind) {
    case HeadKind::kMtp: return COMMON_SPECULATIVE_TYPE_DRAFT_MTP;
    case HeadKind::kEagle3: return COMMON_SPECULATIVE_TYPE_DRAFT_EAGLE3;
    case HeadKind::kDFlash: return COMMON_SPECULATIVE_TYPE_DRAFT_DFLASH;
    case HeadKind::kDSpark: return COMMON_SPECULATIVE_TYPE_DRAFT_DSPARK;
    case HeadKind::kNone: break;
  }
  throw std::logic_error("no speculative type for this head");
}

}  // namespace

const char* HeadKindName(HeadKind kind) {
  switch (kind) {
    case HeadKind::kMtp: return "mtp";
    case HeadKind::kEagle3: return "eagle3";
    case HeadKind::kDFlash: return "dflash";
    case HeadKind::kDSpark: return "dspark";
    case HeadKind::kNone: break;
  }
  return "";
}

DrafterFile ReadDrafterFile(const std::string& path) {
  ggml_context* meta = nullptr;
  gguf_init_params params{/*no_alloc =*/true, /*ctx =*/&meta};
  std::unique_ptr<gguf_context, decltype(&gguf_free)> g(gguf_init_from_file(path.c_str(), params), gguf_free);
  std::unique_ptr<ggml_context, decltype(&ggml_free)> tensors(meta, ggml_free);
  if (!g) throw std::runtime_error("draft model " + path + " is not a readable GGUF");
  DrafterFile out;
  const int64_t arch_key = gguf_find_key(g.get(), "general.architecture");
  if (arch_key < 0 || gguf_get_kv_type(g.get(), arch_key) != GGUF_TYPE_STRING) return out;
  const std::string arch = gguf_get_val_str(g.get(), arch_key);
  if (arch == "eagle3") {
    out.kind = HeadKind::kEagle3;
  } else if (arch == "dflash") {
    out.kind = gguf_find_tensor(g.get(), "markov_w1.weight") >= 0 ? HeadKind::kDSpark : HeadKind::kDFlash;
  } else {
    return out;
  }
  if (const ggml_tensor* fc = tensors ? ggml_get_tensor(tensors.get(), "fc.weight") : nullptr) out.fc_inputs = fc->ne[0];
  const int64_t conf = gguf_find_key(g.get(), "dflash.has_confidence_head");
  if (conf >= 0 && gguf_get_kv_type(g.get(), conf) == GGUF_TYPE_BOOL) out.confidence = gguf_get_val_bool(g.get(), conf);
  return out;
}

int32_t MtpLayersOf(const llama_model* model) { return model ? llama_model_n_layer_nextn(model) : 0; }

HeadDrafter::HeadDrafter(llama_model* target, llama_context* tgt, llama_context_params cp, int32_t n_seq,
                         int32_t draft_max, float p_min)
    : kind_(HeadKind::kMtp), tgt_(tgt), n_seq_(n_seq), draft_max_(draft_max), drafted_(static_cast<size_t>(n_seq), false) {
  if (MtpLayersOf(target) <= 0) throw std::runtime_error("the model has no MTP layers (nextn_predict_layers)");
  cp.ctx_type = LLAMA_CONTEXT_TYPE_MTP;
  Init(target, cp, p_min);
}

HeadDrafter::HeadDrafter(const DrafterFile& file, llama_model* drafter, llama_context* tgt, llama_context_params cp,
                         int32_t n_seq, int32_t draft_max, float p_min)
    : kind_(file.kind), tgt_(tgt), owned_(drafter), n_seq_(n_seq), draft_max_(draft_max),
      deferred_(static_cast<size_t>(n_seq), -1), batch_first_(static_cast<size_t>(n_seq), -1),
      batch_rows_(static_cast<size_t>(n_seq), 0), drafted_(static_cast<size_t>(n_seq), false) {
  try {
    if (kind_ == HeadKind::kNone || kind_ == HeadKind::kMtp) throw std::logic_error("not a drafter GGUF's kind");
    CheckFits(file, drafter);
    if (kind_ == HeadKind::kDSpark && !file.confidence && p_min > 0) {
      throw std::runtime_error("the draft model is a DSpark drafter without a confidence head, which cannot stop a draft at a "
                               "probability: give it --draft-p-min 0 (speculative.draftPMin)");
    }
    const int32_t* ids = llama_model_target_layer_ids(drafter);
    layers_.assign(ids, ids + llama_model_target_layer_ids_n(drafter));
    cp.ctx_type = LLAMA_CONTEXT_TYPE_DEFAULT;
    Init(drafter, cp, p_min);
  } catch (...) {
    llama_model_free(owned_);
    throw;
  }
}

void HeadDrafter::CheckFits(const DrafterFile& file, const llama_model* drafter) const {
  const llama_model* target = llama_get_model(tgt_);
  const std::string what = std::string(kind_ == HeadKind::kEagle3 ? "an EAGLE-3" : kind_ == HeadKind::kDSpark ? "a DSpark" : "a DFlash") +
                           " drafter";
  const std::string arch = MetaString(target, "general.architecture");
  if (std::none_of(std::begin(kLayerInputArchs), std::end(kLayerInputArchs), [&](const char* a) { return arch == a; })) {
    std::string known;
    for (const char* a : kLayerInputArchs) known += (known.empty() ? "" : ", ") + std::string(a);
    throw std::runtime_error("the draft model is " + what + ", which reads the model's hidden states; llama.cpp gives them for " +
                             known + ", not for '" + arch + "'");
  }
  const uint32_t n = llama_model_target_layer_ids_n(drafter);
  const int32_t* ids = llama_model_target_layer_ids(drafter);
  const int32_t n_layer = llama_model_n_layer(target);
  if (n == 0 || !ids) throw std::runtime_error("the draft model is " + what + " without target_layers");
  for (uint32_t i = 0; i < n; ++i) {
    if (ids[i] < 0 || ids[i] >= n_layer) {
      throw std::runtime_error("the draft model is " + what + " reading layer " + std::to_string(ids[i]) + "; the model has " +
                               std::to_string(n_layer) + " layers (a drafter made for another model?)");
    }
  }
  const int64_t want = int64_t{n} * llama_model_n_embd(target);
  if (file.fc_inputs != want) {
    throw std::runtime_error("the draft model is " + what + " reading " + std::to_string(file.fc_inputs) +
                             " features; the model gives " + std::to_string(want) + " (" + std::to_string(n) + " layers of " +
                             std::to_string(llama_model_n_embd(target)) + "): a drafter made for another model?");
  }
  if (kind_ != HeadKind::kEagle3 && llama_vocab_mask(llama_model_get_vocab(drafter)) < 0) {
    throw std::runtime_error("the draft model is " + what + " without a mask token (tokenizer.ggml.mask_token_id)");
  }
}

void HeadDrafter::Init(llama_model* model, llama_context_params cp, float p_min) {
  // The head's context: the target's shape (sequences, context, batch), reading the target's
  // hidden states (ctx_other).
  cp.n_ctx = llama_n_ctx(tgt_);
  cp.n_rs_seq = 0;
  cp.ctx_other = tgt_;
  cp.embeddings = false;
  cp.pooling_type = LLAMA_POOLING_TYPE_NONE;
  ctx_ = llama_init_from_model(model, cp);
  if (!ctx_) throw std::runtime_error(std::string("failed to create the ") + HeadKindName(kind_) + " drafter's context");
  mem_ = llama_get_memory(ctx_);
  common_params_speculative params;
  params.types = {SpecType(kind_)};
  params.draft.n_max = draft_max_;
  params.draft.n_min = 0;
  params.draft.p_min = p_min;
  params.draft.backend_sampling = false;  // the head's top tokens are read on the CPU
  params.draft.ctx_tgt = tgt_;
  params.draft.ctx_dft = ctx_;
  try {
    spec_ = common_speculative_init(params, static_cast<uint32_t>(n_seq_));
  } catch (...) {
    spec_ = nullptr;
    llama_free(ctx_);
    ctx_ = nullptr;
    throw;
  }
  if (!spec_) {
    llama_free(ctx_);
    ctx_ = nullptr;
    throw std::runtime_error(std::string("failed to set up ") + HeadKindName(kind_) + " drafting");
  }
  draft_max_ = std::max(1, common_speculative_n_max(spec_));
}

HeadDrafter::~HeadDrafter() {
  common_speculative_free(spec_);
  // The target stops producing hidden states for a head that is gone.
  llama_set_embeddings_nextn(tgt_, false, false);
  for (int32_t l : layers_) llama_set_embeddings_layer_inp(tgt_, static_cast<uint32_t>(l), false);
  llama_free(ctx_);
  if (owned_) llama_model_free(owned_);
}

void HeadDrafter::Warmup(llama_token token) {
  std::unique_lock<std::mutex> serial = SerialCompute();
  llama_batch batch = llama_batch_init(2, 0, 1);
  for (int32_t i = 0; i < 2; ++i) {
    batch.token[i] = token;
    batch.pos[i] = i;
    batch.n_seq_id[i] = 1;
    batch.seq_id[i][0] = 0;
    batch.logits[i] = i == 1;
  }
  batch.n_tokens = 2;
  if (llama_decode(tgt_, batch) == 0) {
    llama_synchronize(tgt_);
    if (Process(batch)) {
      const std::vector<llama_token> held = {token, token};
      std::vector<HeadJob> jobs(1);
      jobs[0].held = &held;
      jobs[0].last = token;
      jobs[0].max = std::min(2, draft_max_);
      Draft(jobs);
    }
  }
  llama_batch_free(batch);
  llama_synchronize(ctx_);
  llama_memory_clear(llama_get_memory(tgt_), true);
  llama_memory_clear(mem_, true);
  std::fill(deferred_.begin(), deferred_.end(), -1);
  std::fill(drafted_.begin(), drafted_.end(), false);
  ok_ = true;
}

void HeadDrafter::Align(int32_t seq, llama_pos pos) {
  const llama_pos max = llama_memory_seq_pos_max(mem_, seq);
  if (max < 0 || max == pos - 1) return;
  if (max >= pos && pos > 0 && llama_memory_seq_pos_min(mem_, seq) < pos) {
    llama_memory_seq_rm(mem_, seq, pos, -1);
    return;
  }
  // A gap (the target got KV without a decode) or nothing left before pos: start over from pos.
  llama_memory_seq_rm(mem_, seq, -1, -1);
}

void HeadDrafter::AlignDeferred(int32_t seq, llama_pos pos) {
  // Its entries then end at pos - 2, as the MTP head's would at pos - 1 before a batch from pos - 1.
  if (deferred_[static_cast<size_t>(seq)] == pos - 1) {
    Align(seq, pos - 1);
    return;
  }
  // The hidden state at pos - 1 was never read (the target got that KV without a decode, or the
  // sequence is a new one): start over from pos.
  llama_memory_seq_rm(mem_, seq, -1, -1);
}

bool HeadDrafter::Process(const llama_batch& batch) {
  if (!ok_ || batch.n_tokens <= 0 || !batch.token) return ok_;
  // Each sequence's first and last position in the batch (a sequence's tokens are contiguous).
  std::vector<llama_pos> first(static_cast<size_t>(n_seq_), -1), last(static_cast<size_t>(n_seq_), -1);
  std::vector<int32_t> rows(static_cast<size_t>(n_seq_), 0);
  for (int32_t i = 0; i < batch.n_tokens; ++i) {
    const llama_seq_id s = batch.seq_id[i][0];
    if (s < 0 || s >= n_seq_) continue;
    const size_t k = static_cast<size_t>(s);
    if (first[k] < 0) first[k] = batch.pos[i];
    last[k] = batch.pos[i];
    ++rows[k];
  }
  // The head drops what it holds from each sequence's first position on.
  for (int32_t s = 0; s < n_seq_; ++s) {
    const llama_pos pos = first[static_cast<size_t>(s)];
    if (pos < 0) continue;
    if (kind_ == HeadKind::kEagle3) {
      AlignDeferred(s, pos);
    } else {
      Align(s, pos);
    }
  }
  ok_ = common_speculative_process(spec_, batch);
  if (SerialDevice()) llama_synchronize(ctx_);
  if (ok_ && kind_ == HeadKind::kEagle3) {
    for (size_t k = 0; k < first.size(); ++k) {
      if (first[k] < 0) continue;
      deferred_[k] = last[k];
      batch_first_[k] = first[k];
      batch_rows_[k] = rows[k];
    }
  }
  return ok_;
}

void HeadDrafter::Draft(std::vector<HeadJob>& jobs) {
  if (!ok_ || jobs.empty()) return;
  std::vector<HeadJob*> drafting;
  for (HeadJob& job : jobs) {
    job.out.clear();
    const llama_pos n_past = static_cast<llama_pos>(job.held->size());
    if (kind_ == HeadKind::kEagle3) {
      // EAGLE-3 seeds its draft at its deferred position with the next token: only where that is
      // the target's last token (it drops the rest itself).
      if (deferred_[static_cast<size_t>(job.seq)] != n_past - 1) continue;
    } else {
      Align(job.seq, n_past);
    }
    common_speculative_draft_params& dp = common_speculative_get_draft_params(spec_, job.seq);
    dp.drafting = true;
    dp.n_max = job.max;
    dp.n_past = n_past;
    dp.id_last = job.last;
    dp.prompt = job.held;
    dp.result = &job.out;
    drafting.push_back(&job);
  }
  if (drafting.empty()) return;
  common_speculative_draft(spec_);
  if (SerialDevice()) llama_synchronize(ctx_);
  for (HeadJob* job : drafting) {
    common_speculative_draft_params& dp = common_speculative_get_draft_params(spec_, job->seq);
    dp.result = nullptr;
    dp.prompt = nullptr;
    if (static_cast<int32_t>(job->out.size()) > job->max) job->out.resize(static_cast<size_t>(job->max));
    if (!job->out.empty()) drafted_[static_cast<size_t>(job->seq)] = true;
  }
}

void HeadDrafter::Accept(int32_t seq, int32_t accepted) {
  if (seq < 0 || seq >= n_seq_) return;
  const size_t k = static_cast<size_t>(seq);
  if (kind_ == HeadKind::kEagle3) {
    // Whoever drafted: the deferred position moves back to the last token kept, as accept() does.
    if (batch_rows_[k] <= 0) return;
    deferred_[k] = batch_first_[k] + std::min(std::max(0, accepted), batch_rows_[k] - 1);
  } else if (!drafted_[k]) {
    return;
  }
  common_speculative_accept(spec_, seq, static_cast<uint16_t>(std::max(0, accepted)));
}

void HeadDrafter::CopyPrefix(int32_t src, int32_t dst, llama_pos n) {
  if (src < 0 || src >= n_seq_ || dst < 0 || dst >= n_seq_ || src == dst) return;
  Forget(dst);
  drafted_[static_cast<size_t>(dst)] = false;
  if (!ok_ || kind_ != HeadKind::kMtp || n <= 0) return;
  if (llama_memory_seq_pos_min(mem_, src) != 0 || llama_memory_seq_pos_max(mem_, src) < n - 1) return;
  // Between per-slot streams llama.cpp copies only whole sequences: the whole, then the cut.
  llama_memory_seq_cp(mem_, src, dst, -1, -1);
  llama_memory_seq_rm(mem_, dst, n, -1);
}

void HeadDrafter::Forget(int32_t seq) {
  if (seq < 0 || seq >= n_seq_) return;
  llama_memory_seq_rm(mem_, seq, -1, -1);
  if (kind_ == HeadKind::kEagle3) deferred_[static_cast<size_t>(seq)] = -1;
}

}  // namespace strata
