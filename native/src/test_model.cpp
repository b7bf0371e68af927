// Test-model generator (see test_model.h). Streams the GGUF: metadata first, then each
// tensor generated, converted and written in row chunks, so a 0.5B model never sits in RAM.
#include "test_model.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <future>
#include <memory>
#include <stdexcept>
#include <thread>
#include <unordered_set>
#include <vector>

#include "ggml.h"
#include "gguf.h"
#include "llama.h"
#include "test_model_copy.h"
#include "test_model_drafter.h"
#include "test_model_hybrid.h"
#include "test_model_plan.h"

namespace strata {

namespace {

struct Shape {
  const char * name;
  int64_t n_embd, n_layer, n_head, n_head_kv, n_ff, ctx_train;
  bool tied_output;
  float rope_base, rms_eps;
  // "llama" (decoder), "bert" (encoder), "glm4moe" (decoder + MTP head), "qwen35" (hybrid recurrent
  // decoder + MTP head), "eagle3" or "dflash" (drafters)
  const char * arch = "llama";
  const char * pooling = "";    // embedding models: the pooling written to the GGUF
  bool copy = false;            // hand-set weights that copy the context (test_model_copy.h)
};

// tiny: seconds to make, a few MB plus the vocab's embedding. 0.5b: Qwen2-0.5B's shapes
// (head dim 64, tied output) as a performance stand-in; 7b: Qwen2.5-7B's (head dim 128, 4 KV heads,
// untied output; ~4.2 GB in q4_0), the stand-in for a GPU's chat model. Embedding models: embed-bert is a
// BERT-architecture encoder (bge-micro-like, mean pooling; use a WordPiece vocab such as
// bert-bge), embed-causal a decoder with last-token pooling (Qwen3-Embedding-like), rerank-bert
// the encoder with a classification head on its CLS token (bge-reranker-like, pooling 'rank').
const Shape kShapes[] = {
    {"tiny", 128, 4, 4, 2, 384, 4096, true, 10000.0f, 1e-5f},
    {"0.5b", 896, 24, 14, 2, 4864, 32768, true, 1000000.0f, 1e-6f},
    {"7b", 3584, 28, 28, 4, 18944, 32768, false, 1000000.0f, 1e-6f},
    {"embed-bert", 128, 3, 4, 4, 512, 512, true, 0.0f, 1e-12f, "bert", "mean"},
    {"embed-causal", 128, 4, 4, 2, 384, 4096, true, 10000.0f, 1e-6f, "llama", "last"},
    {"rerank-bert", 128, 3, 4, 4, 512, 512, true, 0.0f, 1e-12f, "bert", "rank"},
    // copy: a decoder whose greedy continuation copies its context (an induction head, hand-set);
    // copy-0.5b: the same in Qwen2-0.5B's size (zero layers beyond two), the speculative decoding
    // workload on weights that are not trained. Heads of 128, one KV head.
    {"copy", 256, 2, 2, 1, 64, 8192, false, kCopyRopeBase, 1e-6f, "llama", "", true},
    {"copy-0.5b", 896, 24, 7, 1, 4864, 32768, false, kCopyRopeBase, 1e-6f, "llama", "", true},
    // mtp: tiny's size in GLM-4.5's architecture, whose trunk layers are all dense, plus one
    // multi-token-prediction (NextN) block after them (n_layer counts the trunk only): the
    // smallest model llama.cpp drafts from with its own MTP head on the CPU.
    {"mtp", 128, 2, 4, 2, 384, 4096, true, 10000.0f, 1e-5f, "glm4moe"},
    // copy-mtp: copy-0.5b in GLM-4.5's architecture with a NextN block that copies one token
    // ahead (test_model_copy.h): drafts the trunk accepts, from a head that costs a twenty-fourth
    // of its layers, the MTP speed-up workload.
    {"copy-mtp", 896, 24, 7, 1, 4864, 32768, false, kCopyRopeBase, 1e-6f, "glm4moe", "", true},
    // hybrid: tiny's size in Qwen3.5's architecture (test_model_hybrid.h): three gated delta net
    // (recurrent) layers and a full attention one, plus a NextN block.
    {"hybrid", 128, 4, 4, 2, 384, 4096, true, 10000.0f, 1e-6f, "qwen35"},
    // Drafters for tiny (test_model_drafter.h): an EAGLE-3 head, a DFlash block drafter, a DSpark one.
    {"eagle3", 128, 1, 4, 2, 384, 4096, true, 10000.0f, 1e-5f, "eagle3"},
    {"dflash", 128, 1, 4, 2, 384, 4096, true, 10000.0f, 1e-5f, "dflash"},
    {"dspark", 128, 1, 4, 2, 384, 4096, true, 10000.0f, 1e-5f, "dflash"},
};

// The MTP block's mixture of experts (GLM's NextN block is an MoE layer): two small experts, one
// routed per token, and a shared expert of the same width.
constexpr int64_t kMtpExperts = 2, kMtpExpertFf = 64;

int PoolingId(const std::string & name) {
  if (name == "mean") return LLAMA_POOLING_TYPE_MEAN;
  if (name == "cls") return LLAMA_POOLING_TYPE_CLS;
  if (name == "last") return LLAMA_POOLING_TYPE_LAST;
  if (name == "rank") return LLAMA_POOLING_TYPE_RANK;
  throw std::invalid_argument("pooling must be 'mean', 'cls', 'last' or 'rank', got '" + name + "'");
}

struct Quant {
  const char * name;
  ggml_type type;
  uint32_t file_type;  // llama_ftype
};

const Quant kQuants[] = {
    {"f32", GGML_TYPE_F32, LLAMA_FTYPE_ALL_F32},
    {"f16", GGML_TYPE_F16, LLAMA_FTYPE_MOSTLY_F16},
    {"q8_0", GGML_TYPE_Q8_0, LLAMA_FTYPE_MOSTLY_Q8_0},
    {"q4_0", GGML_TYPE_Q4_0, LLAMA_FTYPE_MOSTLY_Q4_0},
};

const Shape & FindShape(const std::string & name) {
  for (const Shape & s : kShapes) if (name == s.name) return s;
  throw std::invalid_argument("shape must be 'tiny', '0.5b', '7b', 'embed-bert', 'embed-causal', 'rerank-bert', 'copy', 'copy-0.5b', 'mtp', 'copy-mtp', 'hybrid', 'eagle3', 'dflash' or 'dspark', got '" + name + "'");
}

const Quant & FindQuant(const std::string & name) {
  for (const Quant & q : kQuants) if (name == q.name) return q;
  throw std::invalid_argument("quant must be one of f32, f16, q8_0, q4_0, got '" + name + "'");
}

uint64_t SplitMix64(uint64_t & state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// xoshiro256+: fast, and the same stream on every platform (unlike std:: distributions).
class Rng {
 public:
  explicit Rng(uint64_t seed) {
    for (uint64_t & w : s_) w = SplitMix64(seed);
  }
  // Uniform in [-1, 1).
  float NextSigned() {
    const uint64_t result = s_[0] + s_[3];
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = (s_[3] << 45) | (s_[3] >> 19);
    return static_cast<float>(result >> 40) * (2.0f / 16777216.0f) - 1.0f;
  }

 private:
  uint64_t s_[4];
};

uint64_t Fnv1a(const std::string & text) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : text) h = (h ^ c) * 0x100000001b3ULL;
  return h;
}

// Norm weights are 1 (biases 0), except the output norm's random signs: with tied embeddings the
// logit of the current token would otherwise be |e_t|^2-biased and every continuation repeats a token.
float NormValue(const TensorPlan & t, Rng & rng) {
  if (t.name.size() > 5 && t.name.compare(t.name.size() - 5, 5, ".bias") == 0) return 0.0f;
  if (t.name != "output_norm.weight") return 1.0f;
  return rng.NextSigned() < 0 ? -1.0f : 1.0f;
}

// BERT: token, token-type and position embeddings with a LayerNorm, then post-norm layers
// (attention, LayerNorm, GELU FFN, LayerNorm); norms have biases, projections do not.
std::vector<TensorPlan> PlanBertTensors(const Shape & s, ggml_type wtype, int64_t n_vocab, const WeightScales & w) {
  std::vector<TensorPlan> plan;
  plan.push_back({"token_embd.weight", s.n_embd, n_vocab, wtype, w.embd});
  plan.push_back({"token_types.weight", s.n_embd, 2, GGML_TYPE_F32, w.embd});
  plan.push_back({"position_embd.weight", s.n_embd, s.ctx_train, GGML_TYPE_F32, w.embd});
  plan.push_back({"token_embd_norm.weight", s.n_embd, 1, GGML_TYPE_F32, 0});
  plan.push_back({"token_embd_norm.bias", s.n_embd, 1, GGML_TYPE_F32, 0});
  for (int64_t i = 0; i < s.n_layer; i++) {
    const std::string p = "blk." + std::to_string(i) + ".";
    plan.push_back({p + "attn_q.weight", s.n_embd, s.n_embd, wtype, w.qk});
    plan.push_back({p + "attn_k.weight", s.n_embd, s.n_embd, wtype, w.qk});
    plan.push_back({p + "attn_v.weight", s.n_embd, s.n_embd, wtype, w.v});
    plan.push_back({p + "attn_output.weight", s.n_embd, s.n_embd, wtype, w.o});
    plan.push_back({p + "attn_output_norm.weight", s.n_embd, 1, GGML_TYPE_F32, 0});
    plan.push_back({p + "attn_output_norm.bias", s.n_embd, 1, GGML_TYPE_F32, 0});
    plan.push_back({p + "ffn_up.weight", s.n_embd, s.n_ff, wtype, w.up});
    plan.push_back({p + "ffn_down.weight", s.n_ff, s.n_embd, wtype, w.down});
    plan.push_back({p + "layer_output_norm.weight", s.n_embd, 1, GGML_TYPE_F32, 0});
    plan.push_back({p + "layer_output_norm.bias", s.n_embd, 1, GGML_TYPE_F32, 0});
  }
  // Rerankers: RoBERTa's classification head over the CLS token (dense + tanh, then one score).
  if (std::string(s.pooling) == "rank") {
    plan.push_back({"cls.weight", s.n_embd, s.n_embd, wtype, w.up});
    plan.push_back({"cls.bias", s.n_embd, 1, GGML_TYPE_F32, 0});
    plan.push_back({"cls.output.weight", s.n_embd, 1, GGML_TYPE_F32, w.down});
    plan.push_back({"cls.output.bias", 1, 1, GGML_TYPE_F32, 0});
  }
  return plan;
}

// GLM-4.5 (glm4moe): dense trunk layers (post-attention norm in place of the FFN norm), then the
// NextN block: an attention layer over the projection of [token embedding; trunk hidden state]
// with an MoE FFN, read through the shared output head. The block is hand-set to pass on only the
// (normalised) embedding of the token it reads (eh_proj = [I | 0], its attention output and FFN
// down projections zero): it then predicts the token after that one by the rule the trunk's own
// embedding path follows (output = embeddings x the embedding), so its drafts agree with the model
// where the trunk's layers do not change the top token.
std::vector<TensorPlan> PlanGlmMtpTensors(const Shape & s, ggml_type wtype, int64_t n_vocab, const WeightScales & w) {
  const int64_t head_dim = s.n_embd / s.n_head;
  const int64_t n_q = s.n_head * head_dim, n_kv = s.n_head_kv * head_dim;
  std::vector<TensorPlan> plan;
  plan.push_back({"token_embd.weight", s.n_embd, n_vocab, wtype, w.embd});
  for (int64_t i = 0; i <= s.n_layer; i++) {
    const std::string p = "blk." + std::to_string(i) + ".";
    plan.push_back({p + "attn_norm.weight", s.n_embd, 1, GGML_TYPE_F32, 0});
    plan.push_back({p + "attn_q.weight", s.n_embd, n_q, wtype, w.qk});
    plan.push_back({p + "attn_k.weight", s.n_embd, n_kv, wtype, w.qk});
    plan.push_back({p + "attn_v.weight", s.n_embd, n_kv, wtype, w.v});
    plan.push_back({p + "attn_output.weight", n_q, s.n_embd, wtype, w.o, 1, i < s.n_layer ? 0 : 1});
    plan.push_back({p + "post_attention_norm.weight", s.n_embd, 1, GGML_TYPE_F32, 0});
    if (i < s.n_layer) {
      plan.push_back({p + "ffn_gate.weight", s.n_embd, s.n_ff, wtype, w.up});
      plan.push_back({p + "ffn_up.weight", s.n_embd, s.n_ff, wtype, w.up});
      plan.push_back({p + "ffn_down.weight", s.n_ff, s.n_embd, wtype, w.down});
      continue;
    }
    const float down = w.down * std::sqrt(static_cast<float>(s.n_ff) / kMtpExpertFf);
    plan.push_back({p + "ffn_gate_inp.weight", s.n_embd, kMtpExperts, GGML_TYPE_F32, w.up});
    plan.push_back({p + "exp_probs_b.bias", kMtpExperts, 1, GGML_TYPE_F32, 0});
    plan.push_back({p + "ffn_gate_exps.weight", s.n_embd, kMtpExpertFf, wtype, w.up, kMtpExperts});
    plan.push_back({p + "ffn_up_exps.weight", s.n_embd, kMtpExpertFf, wtype, w.up, kMtpExperts});
    plan.push_back({p + "ffn_down_exps.weight", kMtpExpertFf, s.n_embd, wtype, down, kMtpExperts, 1});
    plan.push_back({p + "ffn_gate_shexp.weight", s.n_embd, kMtpExpertFf, wtype, w.up});
    plan.push_back({p + "ffn_up_shexp.weight", s.n_embd, kMtpExpertFf, wtype, w.up});
    plan.push_back({p + "ffn_down_shexp.weight", kMtpExpertFf, s.n_embd, wtype, down, 1, 1});
    plan.push_back({p + "nextn.eh_proj.weight", 2 * s.n_embd, s.n_embd, wtype, w.o, 1, 2});
    plan.push_back({p + "nextn.enorm.weight", s.n_embd, 1, GGML_TYPE_F32, 0});
    plan.push_back({p + "nextn.hnorm.weight", s.n_embd, 1, GGML_TYPE_F32, 0});
  }
  plan.push_back({"output_norm.weight", s.n_embd, 1, GGML_TYPE_F32, 0});
  if (!s.tied_output) plan.push_back({"output.weight", s.n_embd, n_vocab, wtype, w.out});
  return plan;
}

std::vector<TensorPlan> PlanDrafterTensors(const Shape & s, ggml_type wtype, int64_t n_vocab, const WeightScales & w) {
  using F = DrafterTensor::Family;
  std::vector<TensorPlan> plan;
  for (const DrafterTensor & t : DrafterTensors(s.name, s.n_embd, s.n_head, s.n_head_kv, s.n_ff, n_vocab)) {
    const float std = t.family == F::kNorm ? 0.0f : t.family == F::kQk ? w.qk : t.family == F::kV ? w.v
                    : t.family == F::kO ? w.o : t.family == F::kDown ? w.down : w.up;
    // Rows shorter than a quantized block (the Markov head's rank) stay f16.
    const ggml_type type = t.family == F::kNorm ? GGML_TYPE_F32 : t.ne0 % ggml_blck_size(wtype) != 0 ? GGML_TYPE_F16 : wtype;
    plan.push_back({t.name, t.ne0, t.ne1, type, std});
  }
  return plan;
}

std::vector<TensorPlan> PlanTensors(const Shape & s, ggml_type wtype, int64_t n_vocab, const WeightScales & w) {
  if (IsDrafterArch(s.arch)) return PlanDrafterTensors(s, wtype, n_vocab, w);
  if (std::string(s.arch) == "qwen35") return HybridTensors(s.n_embd, s.n_layer, s.n_head, s.n_head_kv, s.n_ff, n_vocab, wtype, w);
  if (std::string(s.arch) == "bert") return PlanBertTensors(s, wtype, n_vocab, w);
  if (std::string(s.arch) == "glm4moe") return PlanGlmMtpTensors(s, wtype, n_vocab, w);
  const int64_t head_dim = s.n_embd / s.n_head;
  const int64_t n_q = s.n_head * head_dim, n_kv = s.n_head_kv * head_dim;
  std::vector<TensorPlan> plan;
  plan.push_back({"token_embd.weight", s.n_embd, n_vocab, wtype, w.embd});
  for (int64_t i = 0; i < s.n_layer; i++) {
    const std::string p = "blk." + std::to_string(i) + ".";
    plan.push_back({p + "attn_norm.weight", s.n_embd, 1, GGML_TYPE_F32, 0});
    plan.push_back({p + "attn_q.weight", s.n_embd, n_q, wtype, w.qk});
    plan.push_back({p + "attn_k.weight", s.n_embd, n_kv, wtype, w.qk});
    plan.push_back({p + "attn_v.weight", s.n_embd, n_kv, wtype, w.v});
    plan.push_back({p + "attn_output.weight", n_q, s.n_embd, wtype, w.o});
    plan.push_back({p + "ffn_norm.weight", s.n_embd, 1, GGML_TYPE_F32, 0});
    plan.push_back({p + "ffn_gate.weight", s.n_embd, s.n_ff, wtype, w.up});
    plan.push_back({p + "ffn_up.weight", s.n_embd, s.n_ff, wtype, w.up});
    plan.push_back({p + "ffn_down.weight", s.n_ff, s.n_embd, wtype, w.down});
  }
  plan.push_back({"output_norm.weight", s.n_embd, 1, GGML_TYPE_F32, 0});
  if (!s.tied_output) plan.push_back({"output.weight", s.n_embd, n_vocab, wtype, w.out});
  return plan;
}

using GgufPtr = std::unique_ptr<gguf_context, decltype(&gguf_free)>;
using GgmlPtr = std::unique_ptr<ggml_context, decltype(&ggml_free)>;

GgufPtr ReadVocab(const std::string & path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) {
    throw std::invalid_argument("vocab file '" + path + "' not found: " + std::strerror(errno));
  }
  gguf_init_params params{/*no_alloc =*/ true, /*ctx =*/ nullptr};
  GgufPtr vocab(gguf_init_from_file(path.c_str(), params), gguf_free);
  if (!vocab) throw std::invalid_argument("vocab file '" + path + "' is not a readable GGUF");
  const int64_t tokens = gguf_find_key(vocab.get(), "tokenizer.ggml.tokens");
  if (tokens < 0 || gguf_get_kv_type(vocab.get(), tokens) != GGUF_TYPE_ARRAY || gguf_get_arr_n(vocab.get(), tokens) == 0) {
    throw std::invalid_argument("vocab file '" + path + "' has no tokenizer (tokenizer.ggml.tokens)");
  }
  return vocab;
}

// Writes `added` into the vocab's per-token arrays (tokens, token types, scores where present), the
// way a model family extends a base tokenizer: each id is a "[PAD<id>]" placeholder or the next
// id after the end. Any other id, or a text the vocab already has, is refused.
void AddTokens(gguf_context * vocab, const std::vector<TestModelSpec::AddedToken> & added) {
  if (added.empty()) return;
  const int64_t tokens_key = gguf_find_key(vocab, "tokenizer.ggml.tokens");
  const size_t n = gguf_get_arr_n(vocab, tokens_key);
  std::vector<std::string> texts;
  texts.reserve(n + added.size());
  for (size_t i = 0; i < n; i++) texts.emplace_back(gguf_get_arr_str(vocab, tokens_key, i));
  std::unordered_set<std::string> seen(texts.begin(), texts.end());
  const int64_t type_key = gguf_find_key(vocab, "tokenizer.ggml.token_type");
  std::vector<int32_t> types;
  if (type_key >= 0 && gguf_get_arr_type(vocab, type_key) == GGUF_TYPE_INT32 && gguf_get_arr_n(vocab, type_key) == n) {
    const auto * old = static_cast<const int32_t *>(gguf_get_arr_data(vocab, type_key));
    types.assign(old, old + n);
  }
  const int64_t score_key = gguf_find_key(vocab, "tokenizer.ggml.scores");
  std::vector<float> scores;
  if (score_key >= 0 && gguf_get_arr_type(vocab, score_key) == GGUF_TYPE_FLOAT32 && gguf_get_arr_n(vocab, score_key) == n) {
    const auto * old = static_cast<const float *>(gguf_get_arr_data(vocab, score_key));
    scores.assign(old, old + n);
  }
  for (const auto & t : added) {
    const std::string what = "added token '" + t.text + "' (id " + std::to_string(t.id) + ")";
    if (t.text.empty()) throw std::invalid_argument("an added token must have text");
    if (t.type < 1 || t.type > 6) throw std::invalid_argument(what + ": type must be 1..6");
    if (seen.count(t.text) != 0) throw std::invalid_argument(what + " is already in the vocab");
    const size_t id = static_cast<size_t>(t.id);
    if (t.id >= 0 && id == texts.size()) {
      texts.push_back(t.text);
      if (!types.empty()) types.push_back(t.type);
      if (!scores.empty()) scores.push_back(0.0f);
    } else if (t.id >= 0 && id < texts.size() && texts[id] == "[PAD" + std::to_string(id) + "]") {
      seen.erase(texts[id]);
      texts[id] = t.text;
      if (!types.empty()) types[id] = t.type;
    } else {
      throw std::invalid_argument(what + ": the id must be a [PAD<id>] placeholder or " + std::to_string(texts.size()) +
                                  " (the next id)");
    }
    seen.insert(t.text);
  }
  std::vector<const char *> ptrs;
  ptrs.reserve(texts.size());
  for (const auto & t : texts) ptrs.push_back(t.c_str());
  gguf_set_arr_str(vocab, "tokenizer.ggml.tokens", ptrs.data(), ptrs.size());
  if (!types.empty()) gguf_set_arr_data(vocab, "tokenizer.ggml.token_type", GGUF_TYPE_INT32, types.data(), types.size());
  if (!scores.empty()) gguf_set_arr_data(vocab, "tokenizer.ggml.scores", GGUF_TYPE_FLOAT32, scores.data(), scores.size());
}

// Metadata: llama hyper-parameters, then every tokenizer.* key of the vocab (tokens, merges,
// special ids, chat template, FIM ids where present).
GgufPtr BuildMetadata(const TestModelSpec & spec, const Shape & s, const Quant & q, const gguf_context * vocab, int64_t n_vocab) {
  GgufPtr out(gguf_init_empty(), gguf_free);
  gguf_context * g = out.get();
  const int64_t name_key = gguf_find_key(vocab, "general.name");
  const std::string vocab_name = name_key >= 0 && gguf_get_kv_type(vocab, name_key) == GGUF_TYPE_STRING
      ? gguf_get_val_str(vocab, name_key) : "vocab";
  const std::string a = s.arch;
  auto key = [&](const char * k) { return a + "." + k; };
  gguf_set_val_str(g, "general.architecture", s.arch);
  gguf_set_val_str(g, "general.name", ("strata-test-" + std::string(s.name) + "-" + vocab_name).c_str());
  gguf_set_val_u32(g, "general.file_type", q.file_type);
  if (ggml_is_quantized(q.type)) gguf_set_val_u32(g, "general.quantization_version", GGML_QNT_VERSION);
  gguf_set_val_u32(g, key("vocab_size").c_str(), static_cast<uint32_t>(n_vocab));
  gguf_set_val_u32(g, key("context_length").c_str(), static_cast<uint32_t>(s.ctx_train));
  gguf_set_val_u32(g, key("embedding_length").c_str(), static_cast<uint32_t>(s.n_embd));
  const bool glm = a == "glm4moe", hybrid = a == "qwen35";
  gguf_set_val_u32(g, key("block_count").c_str(), static_cast<uint32_t>(s.n_layer + (glm || hybrid ? 1 : 0)));
  if (hybrid) SetHybridMetadata(g, s.n_embd, s.n_head);
  if (glm) {
    gguf_set_val_u32(g, key("nextn_predict_layers").c_str(), 1);
    gguf_set_val_u32(g, key("leading_dense_block_count").c_str(), static_cast<uint32_t>(s.n_layer));
    gguf_set_val_u32(g, key("expert_count").c_str(), static_cast<uint32_t>(kMtpExperts));
    gguf_set_val_u32(g, key("expert_used_count").c_str(), 1);
    gguf_set_val_u32(g, key("expert_shared_count").c_str(), 1);
    gguf_set_val_u32(g, key("expert_feed_forward_length").c_str(), static_cast<uint32_t>(kMtpExpertFf));
    gguf_set_val_f32(g, key("expert_weights_scale").c_str(), 1.0f);
    gguf_set_val_bool(g, key("expert_weights_norm").c_str(), true);
  }
  gguf_set_val_u32(g, key("feed_forward_length").c_str(), static_cast<uint32_t>(s.n_ff));
  gguf_set_val_u32(g, key("attention.head_count").c_str(), static_cast<uint32_t>(s.n_head));
  if (a == "bert") {
    gguf_set_val_f32(g, key("attention.layer_norm_epsilon").c_str(), s.rms_eps);
    gguf_set_val_bool(g, key("attention.causal").c_str(), false);
  } else {
    gguf_set_val_u32(g, key("attention.head_count_kv").c_str(), static_cast<uint32_t>(s.n_head_kv));
    gguf_set_val_u32(g, key("rope.dimension_count").c_str(), static_cast<uint32_t>(s.n_embd / s.n_head));
    gguf_set_val_f32(g, key("rope.freq_base").c_str(), s.rope_base);
    gguf_set_val_f32(g, key("attention.layer_norm_rms_epsilon").c_str(), s.rms_eps);
  }
  const std::string pooling = spec.pooling.empty() ? s.pooling : spec.pooling;
  if (!pooling.empty()) gguf_set_val_u32(g, key("pooling_type").c_str(), static_cast<uint32_t>(PoolingId(pooling)));
  gguf_set_val_u32(g, "strata.test_model.version", kTestModelVersion);
  gguf_set_val_u64(g, "strata.test_model.seed", spec.seed);
  if (spec.std > 0) gguf_set_val_f32(g, "strata.test_model.std", spec.std);
  if (spec.logit_scale != 1.0f) gguf_set_val_f32(g, "strata.test_model.logit_scale", spec.logit_scale);

  GgufPtr tokenizer(gguf_init_empty(), gguf_free);
  gguf_set_kv(tokenizer.get(), vocab);
  for (int64_t i = gguf_get_n_kv(tokenizer.get()) - 1; i >= 0; i--) {
    const std::string key = gguf_get_key(tokenizer.get(), i);
    if (key.rfind("tokenizer.", 0) != 0) gguf_remove_key(tokenizer.get(), key.c_str());
  }
  gguf_set_kv(g, tokenizer.get());
  if (!spec.chat_template.empty()) gguf_set_val_str(g, "tokenizer.chat_template", spec.chat_template.c_str());
  if (IsDrafterArch(a)) SetDrafterMetadata(g, s.name, s.n_embd, n_vocab);
  // Encoders read token types; a vocab without the count gets BERT's two.
  if (a == "bert" && gguf_find_key(g, "tokenizer.ggml.token_type_count") < 0) {
    gguf_set_val_u32(g, "tokenizer.ggml.token_type_count", 2);
  }
  return out;
}

// One tensor's bytes in its type: generated and converted in row chunks (so no f32 copy of a large
// tensor exists). Each tensor has its own random stream (seeded by its name), so tensors can be
// made in any order or at once and the file is the same.
std::vector<uint8_t> GenerateTensor(const TensorPlan & t, uint64_t seed, const CopyModel * copy) {
  Rng rng(seed ^ Fnv1a(t.name));
  const float amplitude = t.std * std::sqrt(3.0f);  // uniform [-a, a] has std a/sqrt(3)
  const int64_t rows_per_chunk = std::max<int64_t>(1, (int64_t{1} << 20) / t.ne0);
  const size_t row_bytes = ggml_row_size(t.type, t.ne0);
  const int64_t n_rows = t.ne1 * t.ne2;
  std::vector<float> src(static_cast<size_t>(rows_per_chunk * t.ne0));
  std::vector<uint8_t> out(static_cast<size_t>(n_rows) * row_bytes);
  size_t at = 0;
  for (int64_t row = 0; row < n_rows; row += rows_per_chunk) {
    const int64_t rows = std::min(rows_per_chunk, n_rows - row);
    const size_t n = static_cast<size_t>(rows * t.ne0);
    if (copy) {
      for (int64_t r = 0; r < rows; r++) CopyModelRow(*copy, t.name, row + r, t.ne0, &src[static_cast<size_t>(r * t.ne0)]);
    } else if (t.fill != 0) {
      std::fill(src.begin(), src.begin() + static_cast<std::ptrdiff_t>(n), 0.0f);
      if (t.fill == 2) {
        for (int64_t r = 0; r < rows; r++) src[static_cast<size_t>(r * t.ne0 + row + r)] = 1.0f;
      }
      if (t.fill == 3) std::fill(src.begin(), src.begin() + static_cast<std::ptrdiff_t>(n), -1.0f);
    } else {
      for (size_t i = 0; i < n; i++) src[i] = t.std > 0 ? amplitude * rng.NextSigned() : NormValue(t, rng);
    }
    uint8_t * dst = out.data() + at;
    if (t.type == GGML_TYPE_F32) {
      std::memcpy(dst, src.data(), n * sizeof(float));
      at += n * sizeof(float);
    } else if (t.type == GGML_TYPE_F16) {
      ggml_fp32_to_fp16_row(src.data(), reinterpret_cast<ggml_fp16_t *>(dst), static_cast<int64_t>(n));
      at += n * sizeof(ggml_fp16_t);
    } else {
      at += ggml_quantize_chunk(t.type, src.data(), dst, 0, rows, t.ne0, nullptr);
    }
  }
  out.resize(at);
  return out;
}

void WriteBytes(FILE * f, const void * data, size_t bytes, const std::string & out) {
  if (bytes > 0 && fwrite(data, 1, bytes, f) != bytes) throw std::runtime_error("cannot write " + out + ": " + std::strerror(errno));
}

// Generates the tensors on up to one thread per core, a window of them at a time (bounded in bytes
// so a 7B model never sits in RAM), and writes them in plan order, each padded to `alignment`.
void WriteTensors(FILE * f, const std::vector<TensorPlan> & plan, uint64_t seed, size_t alignment, const std::string & out, const CopyModel * copy) {
  const size_t threads = std::max(1u, std::thread::hardware_concurrency());
  constexpr size_t kWindowBytes = size_t{1} << 30;
  std::vector<std::future<std::vector<uint8_t>>> made(plan.size());
  size_t launched = 0, in_flight = 0;
  auto bytes_of = [&](size_t i) { return static_cast<size_t>(plan[i].ne1 * plan[i].ne2) * ggml_row_size(plan[i].type, plan[i].ne0); };
  static const uint8_t zeros[64] = {};
  for (size_t i = 0; i < plan.size(); i++) {
    // Always at least the tensor written next; more while the window has room.
    while (launched < plan.size() && (launched == i || (launched - i < threads && in_flight + bytes_of(launched) <= kWindowBytes))) {
      in_flight += bytes_of(launched);
      made[launched] = std::async(std::launch::async, GenerateTensor, std::cref(plan[launched]), seed, copy);
      launched++;
    }
    const std::vector<uint8_t> bytes = made[i].get();
    in_flight -= bytes_of(i);
    WriteBytes(f, bytes.data(), bytes.size(), out);
    for (size_t pad = GGML_PAD(bytes.size(), alignment) - bytes.size(); pad > 0;) {
      const size_t chunk = std::min(pad, sizeof(zeros));
      WriteBytes(f, zeros, chunk, out);
      pad -= chunk;
    }
  }
}

// Loads the written file's vocabulary with llama.cpp: proves the metadata parses and reads the
// FIM ids exactly as the engine will (llama.cpp also detects them from token texts).
void ReadBackVocab(const std::string & path, TestModelResult & result) {
  ggml_log_callback prev_cb = nullptr;
  void * prev_ud = nullptr;
  llama_log_get(&prev_cb, &prev_ud);
  struct Forward { ggml_log_callback cb; void * ud; } forward{prev_cb, prev_ud};
  // Only errors pass: a vocab load prints ~40 info lines.
  llama_log_set([](ggml_log_level level, const char * text, void * ud) {
    auto * fw = static_cast<Forward *>(ud);
    if (level == GGML_LOG_LEVEL_ERROR && fw->cb) fw->cb(level, text, fw->ud);
  }, &forward);
  llama_model_params params = llama_model_default_params();
  params.vocab_only = true;
  llama_model * model = llama_model_load_from_file(path.c_str(), params);
  llama_log_set(prev_cb, prev_ud);
  if (!model) throw std::runtime_error("llama.cpp could not load the generated model's vocabulary (" + path + ")");
  const llama_vocab * vocab = llama_model_get_vocab(model);
  result.vocab_size = static_cast<uint32_t>(llama_vocab_n_tokens(vocab));
  result.fim_prefix = llama_vocab_fim_pre(vocab);
  result.fim_suffix = llama_vocab_fim_suf(vocab);
  result.fim_middle = llama_vocab_fim_mid(vocab);
  llama_model_free(model);
}

std::string TempPathFor(const std::string & out) {
  static std::atomic<unsigned> counter{0};
  return out + ".tmp-" + std::to_string(getpid()) + "-" + std::to_string(counter++);
}

}  // namespace

WeightScales DefaultWeightScales(const std::string & shape_name) {
  const Shape & s = FindShape(shape_name);
  const float embd = static_cast<float>(s.n_embd), ff = static_cast<float>(s.n_ff);
  WeightScales w{};
  w.embd = 12.0f / std::sqrt(embd);  // logits' std ~12: the top token leads by ~2.5 on average
  w.qk = 1.5f / std::sqrt(embd);
  w.v = 1.0f / std::sqrt(embd);
  w.o = 2.0f / std::sqrt(embd);
  w.up = 1.0f / std::sqrt(embd);
  w.down = 2.0f / std::sqrt(ff);
  w.out = 12.0f / std::sqrt(embd);
  return w;
}

TestModelResult WriteTestModel(const TestModelSpec & spec) {
  WeightScales scales = DefaultWeightScales(spec.shape);
  if (spec.std > 0) scales = {spec.std, spec.std, spec.std, spec.std, spec.std, spec.std, spec.std};
  scales.embd *= spec.logit_scale;
  scales.out *= spec.logit_scale;
  return WriteTestModel(spec, scales);
}

TestModelResult WriteTestModel(const TestModelSpec & spec, const WeightScales & scales) {
  Shape shape = FindShape(spec.shape);
  if (spec.ctx_train < 0 || spec.ctx_train > (int64_t{1} << 24)) throw std::invalid_argument("ctxTrain must be 0 to 16777216");
  if (spec.ctx_train > 0) shape.ctx_train = spec.ctx_train;
  const Quant & quant = FindQuant(spec.quant);
  if (!(spec.std >= 0.0f) || !std::isfinite(spec.std)) throw std::invalid_argument("std must be a positive number");
  if (!(spec.logit_scale > 0.0f) || !std::isfinite(spec.logit_scale)) throw std::invalid_argument("logitScale must be a positive number");
  if (spec.out.empty()) throw std::invalid_argument("out must be a file path");
  struct stat st {};
  if (stat(spec.out.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    throw std::invalid_argument("out '" + spec.out + "' is a directory");
  }
  GgufPtr vocab = ReadVocab(spec.vocab);
  AddTokens(vocab.get(), spec.added);
  const int64_t n_vocab = static_cast<int64_t>(gguf_get_arr_n(vocab.get(), gguf_find_key(vocab.get(), "tokenizer.ggml.tokens")));

  GgufPtr meta = BuildMetadata(spec, shape, quant, vocab.get(), n_vocab);
  vocab.reset();
  const std::vector<TensorPlan> plan = PlanTensors(shape, quant.type, n_vocab, scales);
  // Tensor descriptions only (no_alloc): gguf needs shapes and types to lay out offsets.
  ggml_init_params ip{ggml_tensor_overhead() * (plan.size() + 1), nullptr, /*no_alloc =*/ true};
  GgmlPtr tensors(ggml_init(ip), ggml_free);
  TestModelResult result;
  for (const TensorPlan & t : plan) {
    ggml_tensor * tensor = t.ne2 > 1   ? ggml_new_tensor_3d(tensors.get(), t.type, t.ne0, t.ne1, t.ne2)
                           : t.ne1 == 1 ? ggml_new_tensor_1d(tensors.get(), t.type, t.ne0)
                                        : ggml_new_tensor_2d(tensors.get(), t.type, t.ne0, t.ne1);
    ggml_set_name(tensor, t.name.c_str());
    gguf_add_tensor(meta.get(), tensor);
    result.params += static_cast<uint64_t>(t.ne0 * t.ne1 * t.ne2);
  }

  const std::string tmp = TempPathFor(spec.out);
  FILE * f = std::fopen(tmp.c_str(), "wb");
  if (!f) throw std::runtime_error("cannot write " + spec.out + ": " + std::strerror(errno));
  try {
    if (!gguf_write_to_file_ptr(meta.get(), f, /*only_meta =*/ true)) throw std::runtime_error("cannot write " + spec.out);
    const size_t alignment = gguf_get_alignment(meta.get());
    const bool glm = std::string(shape.arch) == "glm4moe";
    const CopyModel copy{spec.seed, shape.n_embd, glm ? static_cast<int>(shape.n_layer) : -1, glm};
    WriteTensors(f, plan, spec.seed, alignment, spec.out, shape.copy ? &copy : nullptr);
    if (std::fflush(f) != 0 || std::ferror(f)) throw std::runtime_error("cannot write " + spec.out + ": " + std::strerror(errno));
    const long size = std::ftell(f);
    result.bytes = size > 0 ? static_cast<uint64_t>(size) : 0;
    const int closed = std::fclose(f);
    f = nullptr;
    if (closed != 0) throw std::runtime_error("cannot write " + spec.out + ": " + std::strerror(errno));
    ReadBackVocab(tmp, result);
    if (std::rename(tmp.c_str(), spec.out.c_str()) != 0) {
      throw std::runtime_error("cannot write " + spec.out + ": " + std::strerror(errno));
    }
  } catch (...) {
    if (f) std::fclose(f);
    std::remove(tmp.c_str());
    throw;
  }
  return result;
}

}  // namespace strata
