#include "cpu_threadpool.h"

namespace strata {

CpuThreadpools AttachCpuThreadpools(llama_context* ctx, int32_t n_threads, int32_t n_threads_batch) {
  CpuThreadpools out;
  ggml_backend_dev_t cpu = ggml_backend_dev_by_type(GGML_BACKEND_DEVICE_TYPE_CPU);
  if (!cpu) return out;
  ggml_backend_reg_t reg = ggml_backend_dev_backend_reg(cpu);
  auto* new_fn = reinterpret_cast<decltype(ggml_threadpool_new)*>(ggml_backend_reg_get_proc_address(reg, "ggml_threadpool_new"));
  auto* free_fn = reinterpret_cast<decltype(ggml_threadpool_free)*>(ggml_backend_reg_get_proc_address(reg, "ggml_threadpool_free"));
  if (!new_fn || !free_fn) return out;
  out.free_fn = free_fn;

  ggml_threadpool_params tpp = ggml_threadpool_params_default(n_threads);
  ggml_threadpool_params tpp_batch = ggml_threadpool_params_default(n_threads_batch);
  if (!ggml_threadpool_params_match(&tpp, &tpp_batch)) {
    out.batch = new_fn(&tpp_batch);
    if (!out.batch) return out;
    tpp.paused = true;  // llama resumes the pool it needs for each decode
  }
  out.pool = new_fn(&tpp);
  if (!out.pool) {
    FreeCpuThreadpools(out);
    return out;
  }
  llama_attach_threadpool(ctx, out.pool, out.batch);
  return out;
}

void FreeCpuThreadpools(CpuThreadpools& pools) {
  if (pools.free_fn) {
    if (pools.pool) pools.free_fn(pools.pool);
    if (pools.batch) pools.free_fn(pools.batch);
  }
  pools = CpuThreadpools{};
}

}  // namespace strata
