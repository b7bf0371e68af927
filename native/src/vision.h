// Images through a projector (llama.cpp's libmtmd): loading the projector beside a model,
// preparing an image (decode, resize, the image chunk libmtmd makes of it) and evaluating that
// chunk into a sequence's KV.
//
// In a prompt an image is a run of placeholder token ids, one per position it takes, all
// negative (never a vocabulary id) and derived from the SHA-256 of the image's bytes. The
// prompt's token list therefore names the image: the engine's prefix match (slots, the park,
// sessions) reuses an image's KV only for the same image at the same place, and an answer
// stays a function of the request.
#pragma once
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "llama.h"

struct mtmd_context;
struct mtmd_input_chunks;
struct mtmd_input_chunk;

namespace strata {

// One prepared image: the tokens it takes in the prompt (a projector's own begin/end marker tokens
// around the placeholders), and the chunk the engine evaluates at the placeholders.
struct PreparedImage {
  std::string id;                       // SHA-256 of the bytes (hex), libmtmd's bitmap id
  std::vector<llama_token> tokens;      // marker tokens, placeholders
  size_t at = 0;                        // where the placeholders start within `tokens`
  size_t n = 0;                         // how many (the image's positions)
  uint32_t nx = 0, ny = 0;              // decoded size in pixels
  std::shared_ptr<mtmd_input_chunks> chunks;  // owns `chunk`
  const mtmd_input_chunk* chunk = nullptr;
};

// An image in one request: its placeholders start at prompt[at].
struct ImageSpan {
  size_t at = 0;
  size_t n = 0;
  std::shared_ptr<const PreparedImage> image;
};

// The placeholder id of position i of an image whose SHA-256 is `sha_hex`: negative, and each
// position draws on other bits of the hash (so two images share a run only if their hashes agree).
llama_token ImagePlaceholder(const std::string& sha_hex, size_t i);

// Prepare on a projector that was closed (the engine is closing).
struct VisionClosed : std::runtime_error {
  VisionClosed() : std::runtime_error("engine is closed") {}
};

class Vision {
 public:
  // Throws std::runtime_error naming the problem (unreadable projector, one made for another
  // model's embedding size, a projector kind the engine does not place: M-RoPE, audio only).
  Vision(const std::string& path, llama_model* model, int32_t threads, bool use_gpu);
  ~Vision();
  Vision(const Vision&) = delete;
  Vision& operator=(const Vision&) = delete;

  // Any thread but the engine's (prepareImage runs it on a worker). Decodes and prepares an image
  // (PNG, JPEG, GIF, BMP within vision_decode.h's bounds); throws std::invalid_argument when the
  // bytes are not an image it can read, hold more than their pixels, or it has more than
  // max_pixels pixels (0: no limit), VisionClosed after Close. The last few prepared images are
  // kept, so the request that follows a count finds its image prepared.
  std::shared_ptr<const PreparedImage> Prepare(const uint8_t* data, size_t size, uint64_t max_pixels);

  // Frees the projector, once no Prepare is inside libmtmd: before the model it was made for.
  void Close();

  // Engine thread. Encodes the image and decodes its embeddings into `seq` at positions
  // n_past.., in batches of n_batch; false on failure.
  bool Eval(llama_context* ctx, const PreparedImage& image, llama_pos n_past, llama_seq_id seq, int32_t n_batch);

  const std::string& description() const { return description_; }

 private:
  std::mutex ctx_mu_;  // Prepare's use of ctx_ and Close (Eval runs on the engine thread, before Close)
  mtmd_context* ctx_ = nullptr;
  std::string description_;
  std::mutex cache_mu_;
  struct Cached {
    uint64_t key_lo, key_hi;
    size_t size;
    std::shared_ptr<const PreparedImage> image;
  };
  std::list<Cached> cache_;  // most recent first
};

}  // namespace strata
