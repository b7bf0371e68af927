// Fitting a model to the free memory of its devices with llama.cpp's own fitter (common/fit.cpp of
// the pinned source: what llama-server's --fit runs), then reading back, with the same no-alloc
// measurement, what the fitted parameters use per device. When the fitted plan does not fit, or fits
// only with layers moved off the GPU, the report says which single change would fit instead (fewer
// slots, a smaller context, a quantized KV cache, fewer GPU layers), measured the same way.
// Any thread; calls are serialized (the fitter swaps llama's global logger while it measures).
#pragma once
#include <string>
#include <vector>

#include "engine_options.h"
#include "llama.h"

namespace strata {

// The llama parameters a config asks for, with the buffers they point into (devices, tensor split,
// tensor buffer overrides the fitter writes). Not copyable: mp/cp hold pointers into the vectors.
struct ModelParams {
  std::vector<ggml_backend_dev_t> devs;      // offload devices (the CPU is implied)
  std::vector<ggml_backend_dev_t> dev_list;  // devs + nullptr, what mp.devices points at
  std::vector<float> split;                  // llama_max_devices() entries
  std::vector<llama_model_tensor_buft_override> overrides;  // llama_max_tensor_buft_overrides() entries
  llama_model_params mp{};
  llama_context_params cp{};
  int64_t train_ctx = 0;
  int32_t n_layer = 0;  // repeating layers (0 until known)
  bool fit = false;     // the config's fit setting resolved for these devices
  // A plan that does not fit fails the load; not when the fit only chose the shared pool on the
  // CPU, where weights are mapped from the file and the least pool loads as it did unfitted.
  bool fit_strict = true;
  bool unified = false;  // one KV pool the slots share (cp.kv_unified): no context given
  bool mtp_head = false;  // the model's MTP head drafts: its context is fitted with the model's

  ModelParams() = default;
  ModelParams(const ModelParams&) = delete;
  ModelParams& operator=(const ModelParams&) = delete;
};

inline const char* KvTypeName(ggml_type t) {
  switch (t) {
    case GGML_TYPE_Q8_0: return "q8_0";
    case GGML_TYPE_Q4_0: return "q4_0";
    default: return "f16";
  }
}

// Fits p (gpu layers, tensor split, overrides; the context when cfg.ctx is 0) to free memory with a
// margin of cfg.fit_margin bytes per device, and reports the plan. search false: measures p as it is
// (an automatic context at cfg.fit_ctx_min). Throws std::runtime_error when the model file cannot be
// measured at all.
FitReport FitModelParams(const EngineConfig& cfg, ModelParams& p, bool search);

// The report's words: what does not fit and the changes that would ("... would fit with slots 2,
// ctx 2048 or kvType q8_0"), for load errors.
std::string DescribeNoFit(const FitReport& r);

}  // namespace strata
