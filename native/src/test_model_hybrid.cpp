#include "test_model_hybrid.h"

namespace strata {

namespace {

// The gated delta net's sizes: key heads (groups) and value heads of kStateDim each.
constexpr int64_t kConvKernel = 4, kStateDim = 32, kKeyHeads = 2, kValueHeads = 4;
constexpr uint32_t kAttentionInterval = 4;  // layers 3, 7, ...: full attention

}  // namespace

std::vector<TensorPlan> HybridTensors(int64_t n_embd, int64_t n_layer, int64_t n_head, int64_t n_head_kv, int64_t n_ff,
                                      int64_t n_vocab, ggml_type wtype, const WeightScales & w) {
  const int64_t head_dim = n_embd / n_head;
  const int64_t key_dim = kStateDim * kKeyHeads, value_dim = kStateDim * kValueHeads;
  auto norm = [](const std::string & name, int64_t n) { return TensorPlan{name, n, 1, GGML_TYPE_F32, 0}; };
  std::vector<TensorPlan> out;
  out.push_back({"token_embd.weight", n_embd, n_vocab, wtype, w.embd});
  for (int64_t i = 0; i <= n_layer; i++) {
    const std::string p = "blk." + std::to_string(i) + ".";
    const bool recurrent = i < n_layer && (i + 1) % kAttentionInterval != 0;
    const int head = i == n_layer ? 1 : 0;  // the NextN block's projections out: zeros
    out.push_back(norm(p + "attn_norm.weight", n_embd));
    out.push_back(norm(p + "post_attention_norm.weight", n_embd));
    if (recurrent) {
      out.push_back({p + "attn_qkv.weight", n_embd, 2 * key_dim + value_dim, wtype, w.qk});
      out.push_back({p + "attn_gate.weight", n_embd, value_dim, wtype, w.v});
      out.push_back({p + "ssm_conv1d.weight", kConvKernel, 2 * key_dim + value_dim, GGML_TYPE_F32, w.up});
      out.push_back(norm(p + "ssm_dt.bias", kValueHeads));
      out.push_back({p + "ssm_a", kValueHeads, 1, GGML_TYPE_F32, 0, 1, 3});
      out.push_back({p + "ssm_beta.weight", n_embd, kValueHeads, wtype, w.up});
      out.push_back({p + "ssm_alpha.weight", n_embd, kValueHeads, wtype, w.up});
      out.push_back(norm(p + "ssm_norm.weight", kStateDim));
      out.push_back({p + "ssm_out.weight", value_dim, n_embd, wtype, w.o});
    } else {
      // Full attention (the NextN block's too): one projection gives the query and its gate.
      out.push_back({p + "attn_q.weight", n_embd, 2 * n_head * head_dim, wtype, w.qk});
      out.push_back({p + "attn_k.weight", n_embd, n_head_kv * head_dim, wtype, w.qk});
      out.push_back({p + "attn_v.weight", n_embd, n_head_kv * head_dim, wtype, w.v});
      out.push_back({p + "attn_output.weight", n_head * head_dim, n_embd, wtype, w.o, 1, head});
      out.push_back(norm(p + "attn_q_norm.weight", head_dim));
      out.push_back(norm(p + "attn_k_norm.weight", head_dim));
    }
    out.push_back({p + "ffn_gate.weight", n_embd, n_ff, wtype, w.up});
    out.push_back({p + "ffn_up.weight", n_embd, n_ff, wtype, w.up});
    out.push_back({p + "ffn_down.weight", n_ff, n_embd, wtype, w.down, 1, head});
    if (i == n_layer) {
      out.push_back({p + "nextn.eh_proj.weight", 2 * n_embd, n_embd, wtype, w.o, 1, 2});
      out.push_back(norm(p + "nextn.enorm.weight", n_embd));
      out.push_back(norm(p + "nextn.hnorm.weight", n_embd));
    }
  }
  out.push_back(norm("output_norm.weight", n_embd));
  return out;
}

void SetHybridMetadata(gguf_context * g, int64_t n_embd, int64_t n_head) {
  gguf_set_val_u32(g, "qwen35.nextn_predict_layers", 1);
  gguf_set_val_u32(g, "qwen35.ssm.conv_kernel", static_cast<uint32_t>(kConvKernel));
  gguf_set_val_u32(g, "qwen35.ssm.inner_size", static_cast<uint32_t>(kStateDim * kValueHeads));
  gguf_set_val_u32(g, "qwen35.ssm.state_size", static_cast<uint32_t>(kStateDim));
  gguf_set_val_u32(g, "qwen35.ssm.time_step_rank", static_cast<uint32_t>(kValueHeads));
  gguf_set_val_u32(g, "qwen35.ssm.group_count", static_cast<uint32_t>(kKeyHeads));
  gguf_set_val_u32(g, "qwen35.full_attention_interval", kAttentionInterval);
  // Multi-axis rope over the head's rotary half, text only (as Qwen3.5's 11/11/10 of 64).
  const int32_t half = static_cast<int32_t>(n_embd / n_head / 2);
  const int32_t sections[4] = {half - 2 * (half / 3), half / 3, half / 3, 0};
  gguf_set_arr_data(g, "qwen35.rope.dimension_sections", GGUF_TYPE_INT32, sections, 4);
}

}  // namespace strata
