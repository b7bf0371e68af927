// Loads a model and creates its context from an EngineConfig, checking first what llama.cpp
// would otherwise abort on or report vaguely. Runs on a worker thread (Engine.load).
#pragma once
#include <vector>

#include "cpu_threadpool.h"
#include "engine_options.h"
#include "llama.h"

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
};

// Throws std::runtime_error with a message that names the problem (missing file, not a
// GGUF, ctx over the training context, unknown device with the known ones listed,
// unreachable RPC server, llama's own load error).
LoadedModel LoadModel(const EngineConfig& cfg);

void FreeLoadedModel(LoadedModel& m);

}  // namespace strata
