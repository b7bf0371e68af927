// Writes a random-weight "mlp" projector (test_projector.h), with the tensor names and metadata
// libmtmd's clip loader reads for that kind (tools/mtmd/clip.cpp: load_hparams, load_tensors, and
// the llava graph in models/llava.cpp).
#include "test_projector.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <unistd.h>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "ggml.h"
#include "gguf.h"

namespace strata {

namespace {

// The vision tower: 32x32 images in 8x8 patches (16 image tokens), two blocks (the llava graph
// reads all but the last), width 64.
constexpr int32_t kImageSize = 32;
constexpr int32_t kPatchSize = 8;
constexpr int64_t kEmbd = 64;
constexpr int64_t kHeads = 4;
constexpr int64_t kFf = 128;
constexpr int64_t kLayers = 2;
constexpr int64_t kHidden = 128;  // the MLP's inner width

uint64_t SplitMix(uint64_t & x) {
  uint64_t z = (x += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

struct Tensor {
  std::string name;
  std::vector<int64_t> ne;
  float std;    // uniform weights of this std; 0 with `fill` for norms and biases
  float fill = 0.0f;
};

}  // namespace

TestProjectorResult WriteTestProjector(const TestProjectorSpec & spec) {
  if (spec.out.empty()) throw std::invalid_argument("out must be a file path");
  int64_t text_embd = 0;
  {
    gguf_init_params gp{true, nullptr};
    std::unique_ptr<gguf_context, decltype(&gguf_free)> model(gguf_init_from_file(spec.model.c_str(), gp), gguf_free);
    if (!model) throw std::invalid_argument("model '" + spec.model + "' is not a readable GGUF");
    const int64_t arch = gguf_find_key(model.get(), "general.architecture");
    const std::string key = std::string(arch >= 0 ? gguf_get_val_str(model.get(), arch) : "") + ".embedding_length";
    const int64_t k = gguf_find_key(model.get(), key.c_str());
    if (k < 0 || gguf_get_kv_type(model.get(), k) != GGUF_TYPE_UINT32) throw std::invalid_argument("model '" + spec.model + "' has no " + key);
    text_embd = gguf_get_val_u32(model.get(), k);
  }
  const int64_t n_patches = (kImageSize / kPatchSize) * (kImageSize / kPatchSize);
  const float w = 1.0f / std::sqrt(static_cast<float>(kEmbd));
  std::vector<Tensor> plan = {
      {"v.patch_embd.weight", {kPatchSize, kPatchSize, 3, kEmbd}, 1.0f / std::sqrt(3.0f * kPatchSize * kPatchSize)},
      {"v.patch_embd.bias", {kEmbd}, 0.0f},
      {"v.position_embd.weight", {kEmbd, n_patches}, 0.5f},
      {"v.pre_ln.weight", {kEmbd}, 0.0f, 1.0f},
      {"v.pre_ln.bias", {kEmbd}, 0.0f},
  };
  for (int64_t il = 0; il < kLayers; ++il) {
    const std::string p = "v.blk." + std::to_string(il) + ".";
    for (const char * t : {"attn_q", "attn_k", "attn_v", "attn_out"}) {
      plan.push_back({p + t + ".weight", {kEmbd, kEmbd}, w});
      plan.push_back({p + t + ".bias", {kEmbd}, 0.0f});
    }
    plan.push_back({p + "ln1.weight", {kEmbd}, 0.0f, 1.0f});
    plan.push_back({p + "ln1.bias", {kEmbd}, 0.0f});
    plan.push_back({p + "ln2.weight", {kEmbd}, 0.0f, 1.0f});
    plan.push_back({p + "ln2.bias", {kEmbd}, 0.0f});
    plan.push_back({p + "ffn_up.weight", {kEmbd, kFf}, w});
    plan.push_back({p + "ffn_up.bias", {kFf}, 0.0f});
    plan.push_back({p + "ffn_down.weight", {kFf, kEmbd}, 1.0f / std::sqrt(static_cast<float>(kFf))});
    plan.push_back({p + "ffn_down.bias", {kEmbd}, 0.0f});
  }
  plan.push_back({"mm.0.weight", {kEmbd, kHidden}, w});
  plan.push_back({"mm.0.bias", {kHidden}, 0.0f});
  // Output of the order of a token embedding, so an image moves the answer like text does.
  plan.push_back({"mm.2.weight", {kHidden, text_embd}, 1.0f / std::sqrt(static_cast<float>(kHidden))});
  plan.push_back({"mm.2.bias", {text_embd}, 0.0f});

  size_t data_bytes = 0;
  for (const Tensor & t : plan) {
    size_t n = 1;
    for (int64_t d : t.ne) n *= static_cast<size_t>(d);
    data_bytes += n * sizeof(float) + ggml_tensor_overhead();
  }
  ggml_init_params ip{data_bytes + 1024 * 1024, nullptr, false};
  std::unique_ptr<ggml_context, decltype(&ggml_free)> ctx(ggml_init(ip), ggml_free);
  std::unique_ptr<gguf_context, decltype(&gguf_free)> g(gguf_init_empty(), gguf_free);
  if (!ctx || !g) throw std::runtime_error("out of memory making the projector");
  gguf_context * m = g.get();
  gguf_set_val_str(m, "general.architecture", "clip");
  gguf_set_val_str(m, "general.name", "strata-test-projector");
  gguf_set_val_u32(m, "general.file_type", 0);
  gguf_set_val_bool(m, "clip.has_vision_encoder", true);
  gguf_set_val_str(m, "clip.projector_type", "mlp");
  gguf_set_val_bool(m, "clip.use_gelu", true);
  gguf_set_val_u32(m, "clip.vision.image_size", kImageSize);
  gguf_set_val_u32(m, "clip.vision.patch_size", kPatchSize);
  gguf_set_val_u32(m, "clip.vision.embedding_length", kEmbd);
  gguf_set_val_u32(m, "clip.vision.feed_forward_length", kFf);
  gguf_set_val_u32(m, "clip.vision.block_count", kLayers);
  gguf_set_val_u32(m, "clip.vision.projection_dim", static_cast<uint32_t>(text_embd));
  gguf_set_val_u32(m, "clip.vision.attention.head_count", kHeads);
  gguf_set_val_f32(m, "clip.vision.attention.layer_norm_epsilon", 1e-6f);
  const float mean[3] = {0.5f, 0.5f, 0.5f}, stdv[3] = {0.5f, 0.5f, 0.5f};
  gguf_set_arr_data(m, "clip.vision.image_mean", GGUF_TYPE_FLOAT32, mean, 3);
  gguf_set_arr_data(m, "clip.vision.image_std", GGUF_TYPE_FLOAT32, stdv, 3);

  uint64_t state = spec.seed ^ 0x70726f6a6563746full;  // "projecto"
  for (const Tensor & t : plan) {
    ggml_tensor * x = nullptr;
    switch (t.ne.size()) {
      case 1: x = ggml_new_tensor_1d(ctx.get(), GGML_TYPE_F32, t.ne[0]); break;
      case 2: x = ggml_new_tensor_2d(ctx.get(), GGML_TYPE_F32, t.ne[0], t.ne[1]); break;
      default: x = ggml_new_tensor_4d(ctx.get(), GGML_TYPE_F32, t.ne[0], t.ne[1], t.ne[2], t.ne[3]); break;
    }
    ggml_set_name(x, t.name.c_str());
    auto * d = static_cast<float *>(x->data);
    const float amplitude = t.std * std::sqrt(3.0f);
    for (int64_t i = 0; i < ggml_nelements(x); ++i) {
      const float u = static_cast<float>(SplitMix(state) >> 40) * (2.0f / 16777216.0f) - 1.0f;
      d[i] = t.std > 0 ? amplitude * u : t.fill;
    }
    gguf_add_tensor(m, x);
  }
  const std::string tmp = spec.out + ".tmp-" + std::to_string(getpid());
  if (!gguf_write_to_file(m, tmp.c_str(), false)) {
    std::remove(tmp.c_str());
    throw std::runtime_error("cannot write " + spec.out);
  }
  if (std::rename(tmp.c_str(), spec.out.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    std::remove(tmp.c_str());
    throw std::runtime_error("cannot write " + spec.out + ": " + why);
  }
  TestProjectorResult r;
  r.bytes = gguf_get_meta_size(m) + data_bytes;
  r.image_size = kImageSize;
  r.image_tokens = static_cast<int32_t>(n_patches);
  return r;
}

}  // namespace strata
