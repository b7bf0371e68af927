// Images through a projector (vision.h). Decoding is vision_decode.cpp's (stb_image within the
// bounds a file's header sets), on the calling thread; preparing with libmtmd takes one at a time.
#include "vision.h"

#include <cstring>
#include <stdexcept>

#include "llama_log.h"
#include "mtmd-helper.h"
#include "mtmd.h"
#include "vision_decode.h"

#define XXH_INLINE_ALL
#include "xxhash/xxhash.h"

namespace strata {

namespace {

constexpr size_t kCacheSize = 16;

std::string Hex(uint64_t v) {
  static const char* digits = "0123456789abcdef";
  std::string s(16, '0');
  for (int i = 15; i >= 0; --i, v >>= 4) s[static_cast<size_t>(i)] = digits[v & 15];
  return s;
}

}  // namespace

llama_token ImagePlaceholder(const std::string& hex, size_t i) {
  // 31 bits from a window of the hash that moves with the position, mixed with the position so
  // runs of one image never repeat a value: -(1 + v) with v < 2^31 - 1.
  const size_t w = hex.size() >= 8 ? (i * 7) % (hex.size() - 7) : 0;
  uint64_t v = std::stoull(hex.substr(w, 8), nullptr, 16);
  v = (v ^ (static_cast<uint64_t>(i) * 0x9E3779B1ull)) & 0x7ffffffeull;
  return static_cast<llama_token>(-1 - static_cast<int64_t>(v));
}

Vision::Vision(const std::string& path, llama_model* model, int32_t threads, bool use_gpu) {
  // libmtmd logs through its own hook: route it like llama.cpp's (so load errors are captured).
  mtmd_log_set([](ggml_log_level level, const char* text, void*) { RouteLlamaLogLine(level, text); }, nullptr);
  mtmd_helper_log_set([](ggml_log_level level, const char* text, void*) { RouteLlamaLogLine(level, text); }, nullptr);
  mtmd_context_params p = mtmd_context_params_default();
  p.use_gpu = use_gpu;
  p.print_timings = false;
  p.n_threads = threads > 0 ? threads : p.n_threads;
  p.warmup = true;
  ctx_ = mtmd_init_from_file(path.c_str(), model, p);
  if (!ctx_) throw std::runtime_error("failed to load the projector " + path + " (not a projector GGUF, or made for another model)");
  if (!mtmd_support_vision(ctx_)) {
    mtmd_free(ctx_);
    throw std::runtime_error("the projector " + path + " has no vision encoder (audio projectors are not supported)");
  }
  if (mtmd_decode_use_mrope(ctx_)) {
    mtmd_free(ctx_);
    throw std::runtime_error("the projector " + path + " places images with M-RoPE (Qwen2-VL family), which this engine does not support yet");
  }
  description_ = path;
}

Vision::~Vision() { Close(); }

void Vision::Close() {
  std::lock_guard<std::mutex> lock(ctx_mu_);  // waits for a Prepare in libmtmd
  if (ctx_) mtmd_free(ctx_);
  ctx_ = nullptr;
}

std::shared_ptr<const PreparedImage> Vision::Prepare(const uint8_t* data, size_t size, uint64_t max_pixels) {
  const XXH128_hash_t h = XXH3_128bits(data, size);
  {
    std::lock_guard<std::mutex> lock(cache_mu_);
    for (auto it = cache_.begin(); it != cache_.end(); ++it) {
      if (it->key_lo == h.low64 && it->key_hi == h.high64 && it->size == size) {
        cache_.splice(cache_.begin(), cache_, it);
        return cache_.front().image;
      }
    }
  }
  const DecodedImage rgb = DecodeImage(data, size, max_pixels);
  std::lock_guard<std::mutex> lock(ctx_mu_);
  if (!ctx_) throw VisionClosed();
  mtmd_bitmap* bmp = mtmd_bitmap_init(static_cast<uint32_t>(rgb.width), static_cast<uint32_t>(rgb.height), rgb.rgb.get());
  if (!bmp) throw std::runtime_error("could not make a bitmap of the image");
  auto img = std::make_shared<PreparedImage>();
  img->id = Hex(h.high64) + Hex(h.low64);
  img->nx = static_cast<uint32_t>(rgb.width);
  img->ny = static_cast<uint32_t>(rgb.height);
  mtmd_bitmap_set_id(bmp, img->id.c_str());
  img->chunks = std::shared_ptr<mtmd_input_chunks>(mtmd_input_chunks_init(), mtmd_input_chunks_free);
  const std::string marker = mtmd_default_marker();
  mtmd_input_text text{marker.c_str(), marker.size(), false, true};
  const mtmd_bitmap* bitmaps[] = {bmp};
  const int32_t rc = mtmd_tokenize(ctx_, img->chunks.get(), &text, bitmaps, 1);
  mtmd_bitmap_free(bmp);
  if (rc != 0) throw std::invalid_argument("the projector could not prepare the image (mtmd_tokenize returned " + std::to_string(rc) + ")");
  const size_t n_chunks = mtmd_input_chunks_size(img->chunks.get());
  for (size_t c = 0; c < n_chunks; ++c) {
    const mtmd_input_chunk* chunk = mtmd_input_chunks_get(img->chunks.get(), c);
    if (mtmd_input_chunk_get_type(chunk) == MTMD_INPUT_CHUNK_TYPE_TEXT) {
      size_t n = 0;
      const llama_token* t = mtmd_input_chunk_get_tokens_text(chunk, &n);
      img->tokens.insert(img->tokens.end(), t, t + n);
      continue;
    }
    if (img->chunk) throw std::runtime_error("the projector made more than one image chunk of one image");
    const size_t n = mtmd_input_chunk_get_n_tokens(chunk);
    if (static_cast<size_t>(mtmd_input_chunk_get_n_pos(chunk)) != n) {
      throw std::runtime_error("the projector's image takes other positions than tokens, which this engine does not support");
    }
    img->chunk = chunk;
    img->at = img->tokens.size();
    img->n = n;
    for (size_t i = 0; i < n; ++i) img->tokens.push_back(ImagePlaceholder(img->id, i));
  }
  if (!img->chunk || img->n == 0) throw std::runtime_error("the projector made no image chunk");
  std::lock_guard<std::mutex> cache_lock(cache_mu_);
  cache_.push_front({h.low64, h.high64, size, img});
  if (cache_.size() > kCacheSize) cache_.pop_back();
  return img;
}

bool Vision::Eval(llama_context* ctx, const PreparedImage& image, llama_pos n_past, llama_seq_id seq, int32_t n_batch) {
  llama_pos new_n_past = n_past;
  const int32_t rc = mtmd_helper_eval_chunk_single(ctx_, ctx, image.chunk, n_past, seq, n_batch, false, &new_n_past);
  return rc == 0 && new_n_past == n_past + static_cast<llama_pos>(image.n);
}

}  // namespace strata
