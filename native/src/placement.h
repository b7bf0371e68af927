// Layers per device by llama's own rule (llama_model::load_tensors of the pinned source): the last
// gpu_layers of n_layer + 1 (the output layer counts) go to the offload devices in proportion to the
// tensor split (all zero: to each device's free memory), the rest stay on the CPU.
#pragma once
#include <vector>

#include "engine_options.h"
#include "llama.h"

namespace strata {

struct PlacementAsk {
  llama_split_mode split_mode = LLAMA_SPLIT_MODE_LAYER;
  int32_t main_gpu = 0;
  int32_t gpu_layers = -1;  // < 0: all
  std::vector<float> tensor_split;
};

// One entry per device used (the CPU last, when it holds layers or there is no offload device).
std::vector<PlacementDesc> ComputePlacement(const PlacementAsk& ask, const std::vector<ggml_backend_dev_t>& devs, int32_t n_layer);

}  // namespace strata
