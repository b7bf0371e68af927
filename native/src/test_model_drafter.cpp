#include "test_model_drafter.h"

#include <iterator>
#include <stdexcept>

namespace strata {

namespace {

// The layers of "tiny" (4) whose inputs each drafter reads: EAGLE-3 reads three (low, middle,
// high), DFlash any number.
constexpr int32_t kEagle3Layers[] = {1, 2, 3};
constexpr int32_t kDFlashLayers[] = {1, 3};
// DFlash drafts block size - 1 tokens per pass.
constexpr uint32_t kDFlashBlock = 8;
// DSpark's Markov head: a low-rank bias of the next token's logits from the one before it.
constexpr int64_t kMarkovRank = 16;

}  // namespace

bool IsDrafterArch(const std::string & arch) { return arch == "eagle3" || arch == "dflash"; }

std::vector<DrafterTensor> DrafterTensors(const std::string & kind, int64_t n_embd, int64_t n_head, int64_t n_head_kv, int64_t n_ff,
                                          int64_t n_vocab) {
  using F = DrafterTensor::Family;
  const bool eagle3 = kind == "eagle3";
  if (!eagle3 && kind != "dflash" && kind != "dspark") throw std::invalid_argument("not a drafter kind: " + kind);
  const int64_t head_dim = n_embd / n_head;
  const int64_t n_q = n_head * head_dim, n_kv = n_head_kv * head_dim;
  const int64_t layers = eagle3 ? std::size(kEagle3Layers) : std::size(kDFlashLayers);
  // EAGLE-3's attention reads [token embedding; fused features], twice the width.
  const int64_t attn_in = eagle3 ? 2 * n_embd : n_embd;
  std::vector<DrafterTensor> t = {
      {"fc.weight", layers * n_embd, n_embd, F::kUp},
      {"output_norm.weight", n_embd, 1, F::kNorm},
      {"blk.0.attn_norm.weight", n_embd, 1, F::kNorm},
      {"blk.0.attn_q.weight", attn_in, n_q, F::kQk},
      {"blk.0.attn_k.weight", attn_in, n_kv, F::kQk},
      {"blk.0.attn_v.weight", attn_in, n_kv, F::kV},
      {"blk.0.attn_output.weight", n_q, n_embd, F::kO},
      {"blk.0.ffn_norm.weight", n_embd, 1, F::kNorm},
      {"blk.0.ffn_gate.weight", n_embd, n_ff, F::kUp},
      {"blk.0.ffn_up.weight", n_embd, n_ff, F::kUp},
      {"blk.0.ffn_down.weight", n_ff, n_embd, F::kDown},
  };
  if (eagle3) {
    t.push_back({"blk.0.attn_norm_2.weight", n_embd, 1, F::kNorm});
  } else {
    t.push_back({"enc.output_norm.weight", n_embd, 1, F::kNorm});
    t.push_back({"blk.0.attn_q_norm.weight", head_dim, 1, F::kNorm});
    t.push_back({"blk.0.attn_k_norm.weight", head_dim, 1, F::kNorm});
  }
  if (kind == "dspark") {
    t.push_back({"markov_w1.weight", kMarkovRank, n_vocab, F::kUp});
    t.push_back({"markov_w2.weight", kMarkovRank, n_vocab, F::kDown});
  }
  return t;
}

void SetDrafterMetadata(gguf_context * g, const std::string & kind, int64_t n_embd, int64_t n_vocab) {
  const bool eagle3 = kind == "eagle3";
  const std::string arch = eagle3 ? "eagle3" : "dflash";
  const int32_t * layers = eagle3 ? kEagle3Layers : kDFlashLayers;
  const size_t n = eagle3 ? std::size(kEagle3Layers) : std::size(kDFlashLayers);
  gguf_set_arr_data(g, (arch + ".target_layers").c_str(), GGUF_TYPE_INT32, layers, n);
  if (eagle3) {
    gguf_set_val_u32(g, "eagle3.target_hidden_size", static_cast<uint32_t>(n_embd));
    return;
  }
  gguf_set_val_u32(g, "dflash.block_size", kDFlashBlock);
  if (kind == "dspark") gguf_set_val_bool(g, "dflash.has_confidence_head", false);
  // The noise positions' token: the vocab's own mask token, else its last token.
  if (gguf_find_key(g, "tokenizer.ggml.mask_token_id") < 0) {
    gguf_set_val_u32(g, "tokenizer.ggml.mask_token_id", static_cast<uint32_t>(n_vocab - 1));
  }
}

}  // namespace strata
