// Loads a model and creates its context from an EngineConfig, checking first what llama.cpp
// would otherwise abort on or report vaguely. Runs on a worker thread (Engine.load).
#pragma once
#include <memory>
#include <vector>

#include "cpu_threadpool.h"
#include "draft_head.h"
#include "engine_options.h"
#include "llama.h"
#include "memory_fit.h"
#include "vision.h"

namespace strata {

struct LoadedModel {
  llama_model* model = nullptr;
  llama_context* ctx = nullptr;
  CpuThreadpools pools;  // attached to ctx; freed after it
  ModelInfo info;
  std::vector<ggml_backend_dev_t> devices;  // offload devices, then the CPU
  // Speculative decoding's draft model (same vocabulary), or null; its context shares `pools`.
  llama_model* draft_model = nullptr;
  llama_context* draft_ctx = nullptr;
  std::shared_ptr<Vision> vision;  // the projector (cfg.mmproj), or null
  // Drafting from the model's own MTP head (cfg.spec.mtp) or a drafter GGUF that reads the model's
  // hidden states (cfg.spec.draft_model: EAGLE-3, DFlash), or null; its context shares `pools`.
  std::shared_ptr<HeadDrafter> head;
};

// Throws std::runtime_error with a message that names the problem (missing file, not a
// GGUF, ctx over the training context, unknown device with the known ones listed,
// unreachable RPC server, llama's own load error).
// With cfg.fit, the parameters are first fitted to free memory (memory_fit.h); a plan that does
// not fit throws with the changes that would (ModelInfo.fit holds the report of one that does).
LoadedModel LoadModel(const EngineConfig& cfg);

// Checks the file and the options, loads the backends and resolves the devices as LoadModel does,
// and fills `p` with the parameters it would load with (before any fitting).
void PrepareParams(const EngineConfig& cfg, ModelParams& p, BackendLoadReport* backends = nullptr);

// What LoadModel's fit would decide now, without loading (fitModel in addon.d.ts); search false
// measures the asked parameters as they are (what the model pool budgets with).
FitReport FitModel(const EngineConfig& cfg, bool search);

void FreeLoadedModel(LoadedModel& m);

}  // namespace strata
