// Engine configuration (parsed from JS EngineOptions) and what loading reports (ModelInfo).
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "backends.h"
#include "llama.h"

namespace strata {

struct EngineConfig {
  std::string model;
  bool devices_given = false;
  std::vector<std::string> devices;
  std::vector<std::string> rpc;
  llama_split_mode split_mode = LLAMA_SPLIT_MODE_LAYER;
  std::vector<float> tensor_split;
  int32_t main_gpu = 0;
  int32_t gpu_layers = -1;
  int32_t ctx = 0;  // per slot; 0 = min(4096, train ctx)
  int32_t slots = 4;
  int32_t batch = 512;
  // Prompt tokens per step while any sequence decodes (0 = auto: 64 on CPU, batch on GPUs).
  // On CPU a step's time grows with its tokens, so small chunks keep decoders and short
  // requests moving during a long read at little cost to the read.
  int32_t decode_prompt_budget = 0;
  int32_t ubatch = 0;  // 0 = min(batch, 512)
  int32_t threads = 0;  // 0 = hardware threads
  int32_t threads_batch = 0;  // 0 = threads
  ggml_type kv_type = GGML_TYPE_F16;
  llama_flash_attn_type flash_attn = LLAMA_FLASH_ATTN_TYPE_AUTO;
  double park_budget_mib = 1024;
  double free_ram_floor_mib = 1024;
  int32_t trace_steps = 2048;
  BackendLoadOptions backends;  // which CPU variant and backend folders (process-wide, first load wins)
  bool cpu_repack = true;       // llama's use_extra_bufts: repacked weights (AMX, AVX2/NEON layouts)
};

struct DeviceDesc {
  std::string name, description, type, backend;
  uint64_t memory_free = 0, memory_total = 0;
};

struct PlacementDesc {
  std::string device;
  int32_t layers = 0;
  uint64_t memory_free = 0, memory_total = 0;
};

struct FimTokens {
  llama_token prefix = -1, suffix = -1, middle = -1, pad = -1, rep = -1, sep = -1;
};

struct ModelInfo {
  std::string description, architecture;
  uint64_t params = 0, size_bytes = 0;
  int32_t train_ctx = 0, ctx = 0, slots = 0, vocab_size = 0;
  llama_token bos = -1, eos = -1, eot = -1;
  bool has_fim = false;
  FimTokens fim;
  bool has_chat_template = false;
  std::string chat_template;
  std::vector<std::string> control_texts;  // ControlTokenTexts(vocab)
  std::map<std::string, std::string> metadata;
  std::vector<PlacementDesc> placement;
  std::string kv_type;
  int32_t batch = 0;                 // n_batch: the token budget of one step
  int32_t decode_prompt_budget = 0;  // resolved from EngineConfig
  bool flash_attn = false;
  BackendLoadReport backends;
  bool cpu_repack = true;
};

DeviceDesc DescribeDevice(ggml_backend_dev_t dev);

}  // namespace strata
