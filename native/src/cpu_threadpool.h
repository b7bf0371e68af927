// Persistent CPU thread pools attached to a context, as llama-server does (common_threadpools):
// without them ggml starts and joins its worker threads on every decode.
#pragma once
#include "ggml-cpu.h"
#include "llama.h"

namespace strata {

struct CpuThreadpools {
  ggml_threadpool* pool = nullptr;
  ggml_threadpool* batch = nullptr;  // only when threadsBatch differs from threads
  void (*free_fn)(ggml_threadpool*) = nullptr;
};

// Creates and attaches the pools; on any failure leaves the context on ggml's per-call threads.
CpuThreadpools AttachCpuThreadpools(llama_context* ctx, int32_t n_threads, int32_t n_threads_batch);

// Frees the pools; call after llama_free of the context that used them.
void FreeCpuThreadpools(CpuThreadpools& pools);

}  // namespace strata
