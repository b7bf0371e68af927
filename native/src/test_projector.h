#pragma once
// Test projector generator: a random-weight vision projector GGUF (libmtmd's "mlp" kind, the
// LLaVA-1.5 layout: a small ViT, then a two-layer MLP into the text model's embedding size) for
// a test model, so images run through the real engine in tests. Plain C++; tools.cpp binds it
// as makeTestProjector. Any thread; blocking.
#include <cstdint>
#include <string>

namespace strata {

struct TestProjectorSpec {
  std::string out;       // destination file (written to a temp file beside it, then renamed)
  std::string model;     // the text model's GGUF: the projector's output is its embedding size
  uint64_t seed = 0;
};

struct TestProjectorResult {
  uint64_t bytes = 0;
  int32_t image_size = 0;    // images are resized to this square
  int32_t image_tokens = 0;  // positions one image takes: (image_size / patch_size)^2
};

// Throws std::invalid_argument for a bad spec, std::runtime_error for I/O failures; never leaves
// a partial file at spec.out.
TestProjectorResult WriteTestProjector(const TestProjectorSpec & spec);

}  // namespace strata
