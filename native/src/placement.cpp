#include "placement.h"

#include <algorithm>

namespace strata {

std::vector<PlacementDesc> ComputePlacement(const PlacementAsk& cfg, const std::vector<ggml_backend_dev_t>& devs, int32_t n_layer) {
  ggml_backend_dev_t cpu = ggml_backend_dev_by_type(GGML_BACKEND_DEVICE_TYPE_CPU);
  std::vector<ggml_backend_dev_t> used = devs;
  if (cfg.split_mode == LLAMA_SPLIT_MODE_NONE && !used.empty()) used = {devs[static_cast<size_t>(cfg.main_gpu)]};
  const int32_t n_gpu = cfg.gpu_layers < 0 ? n_layer + 1 : cfg.gpu_layers;
  const int32_t start = std::max(n_layer + 1 - n_gpu, 0);
  const int32_t act = used.empty() ? 0 : std::min(n_gpu, n_layer + 1);
  std::vector<float> splits(used.size(), 0.0f);
  const bool all_zero = cfg.split_mode == LLAMA_SPLIT_MODE_NONE ||
                        std::all_of(cfg.tensor_split.begin(), cfg.tensor_split.end(), [](float x) { return x == 0.0f; });
  for (size_t i = 0; i < used.size(); ++i) {
    if (all_zero) {
      size_t free = 0, total = 0;
      ggml_backend_dev_memory(used[i], &free, &total);
      if (free == 0 && total == 0 && cpu) ggml_backend_dev_memory(cpu, &free, &total);
      splits[i] = static_cast<float>(free);
    } else {
      splits[i] = i < cfg.tensor_split.size() ? cfg.tensor_split[i] : 0.0f;
    }
  }
  float sum = 0;
  for (auto& s : splits) { sum += s; s = sum; }
  for (auto& s : splits) s = sum > 0 ? s / sum : 1.0f;

  std::vector<int32_t> layers(used.size() + 1, 0);  // last = CPU
  for (int32_t il = 0; il < n_layer; ++il) {
    if (il < start || il - start >= act) {
      layers.back()++;
      continue;
    }
    const size_t d = std::upper_bound(splits.begin(), splits.end(), float(il - start) / act) - splits.begin();
    layers[std::min(d, used.size() - 1)]++;
  }
  std::vector<PlacementDesc> out;
  for (size_t i = 0; i <= used.size(); ++i) {
    ggml_backend_dev_t dev = i < used.size() ? used[i] : cpu;
    if (!dev || (i == used.size() && layers[i] == 0 && !used.empty())) continue;
    const DeviceDesc d = DescribeDevice(dev);
    out.push_back({d.name, layers[i], d.memory_free, d.memory_total});
  }
  return out;
}

}  // namespace strata
