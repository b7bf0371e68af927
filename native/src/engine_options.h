// Engine configuration (parsed from JS EngineOptions) and what loading reports (ModelInfo).
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "backends.h"
#include "llama.h"

namespace strata {

// Speculative decoding: draft tokens each step for decoding sequences, verified in the same batch.
struct SpeculativeConfig {
  bool ngram = false;        // prompt lookup: continue a matching n-gram of the sequence's own tokens
  // A GGUF with the same vocabulary ("" = none): a draft model (ngram first when both), or an
  // EAGLE-3 / DFlash drafter made for the model (draft_head.h; in place of n-grams).
  std::string draft_model;
  int32_t draft_max = 8;     // draft tokens per sequence per step
  int32_t draft_min = 1;     // fewer than this: no draft (a short draft costs a verify for little)
  int32_t ngram_min = 2, ngram_max = 4;  // n-gram lengths tried, longest first
  // "lookup": Strata's prompt lookup (draft_ngram.h); or one of llama.cpp's n-gram drafters
  // ("simple", "map-k", "map-k4v", "mod", "cache": draft_ngram_llama.h), its key sizes, draft_max drafts.
  std::string ngram_kind = "lookup";
  float draft_p_min = 0.5f;  // draft model and MTP head: stop drafting at a token it gives less than this
  // The model's own MTP (NextN) head (draft_head.h): -1 when the model has one and no draft model is
  // given (it then replaces n-grams), 0 never (its layers are not even loaded), 1 always (a model
  // without one fails to load).
  int32_t mtp = -1;
};

struct EngineConfig {
  std::string model;
  std::string mmproj;  // a projector GGUF for images (vision.h); "" = text only
  bool devices_given = false;
  std::vector<std::string> devices;
  std::vector<std::string> rpc;
  llama_split_mode split_mode = LLAMA_SPLIT_MODE_LAYER;
  std::vector<float> tensor_split;
  int32_t main_gpu = 0;
  int32_t gpu_layers = -1;
  bool gpu_layers_given = false;  // EngineOptions.gpuLayers was set (the fitter changes only what was not)
  // Per slot (each slot its own KV stream). 0 on a text model: one KV pool the slots share (llama's
  // kv_unified) of up to the training context, fitted to memory, all of which one sequence may use;
  // on an embedding model min(4096, train ctx) per slot.
  int32_t ctx = 0;
  int32_t slots = 4;
  int32_t batch = 512;
  // Prompt tokens per step where a big step would hold others back (0 = auto: 64 on CPU, batch on
  // GPUs): the step a short prompt (at most this many left) joins, and while every slot is taken.
  // Elsewhere a prompt gets the whole batch less the decode tokens (engine_step.cpp).
  int32_t decode_prompt_budget = 0;
  // How long an idle engine gathers requests before its first step (-1 = auto: 8 ms on CPU, 0
  // with GPU offload). Clients that send together reach the engine some milliseconds apart;
  // read in one step they cost one pass over the weights instead of two or three.
  int32_t admit_window_ms = -1;
  int32_t ubatch = 0;  // 0 = min(batch, 512)
  int32_t threads = 0;  // 0 = hardware threads
  int32_t threads_batch = 0;  // 0 = threads
  ggml_type kv_type = GGML_TYPE_F16;
  llama_flash_attn_type flash_attn = LLAMA_FLASH_ATTN_TYPE_AUTO;
  double park_budget_mib = 1024;
  double free_ram_floor_mib = 1024;
  int32_t trace_steps = 2048;
  BackendLoadOptions backends;  // which CPU variant and backend folders (process-wide, first load wins)
  // Batch-invariant CPU math (SetCpuDeterministic, process-wide) and no repacked weights (their
  // GEMM and GEMV round apart by row group): a sequence's tokens then do not depend on what
  // shares its steps, how its prompt is chunked or how many threads run. See docs/design.md, Exactness on the CPU.
  bool deterministic = false;
  bool cpu_repack = true;       // llama's use_extra_bufts: repacked weights (AMX, AVX2/NEON layouts)
  // llama's op_offload: with layers left on the CPU, a GPU runs their matmuls for batches of
  // 32+ tokens (weights streamed to it). Faster prompt reads with partial offload, but the same
  // token's numbers then depend on how many tokens share its step (see docs/design.md, On a GPU).
  bool op_offload = true;
  SpeculativeConfig spec;
  // Embeddings instead of text: -1 auto (the GGUF declares a pooling type, or its architecture is
  // an encoder such as BERT), 0 never, 1 always (pooling from the GGUF, else mean).
  int32_t embeddings = -1;
  // Fit to free device memory before loading (llama.cpp's fitter, see memory_fit.h): GPU layers and tensor
  // split unless given, the shared pool when ctx is 0 (between fit_ctx_min x slots and the training
  // context), leaving fit_margin bytes free per device. A plan that cannot fit fails the load with
  // the changes that would fit.
  int32_t fit = 0;  // -1 auto (on when the model goes to an offload device or the pool is automatic), 0 off, 1 on
  uint64_t fit_margin = uint64_t{1024} << 20;
  int32_t fit_ctx_min = 4096;
  // Bytes other models of this server hold per device (by name). A device whose free memory does not
  // show them (lavapipe reports its whole heap as free) gets them as extra margin.
  std::map<std::string, uint64_t> fit_reserved;
};

// One device in a fit report ("Host" for the CPU's memory): what the plan puts there, in bytes.
struct FitDeviceUse {
  std::string device;
  int32_t layers = 0;
  int64_t free = 0, total = 0;
  uint64_t model = 0, context = 0, compute = 0;
  uint64_t used() const { return model + context + compute; }
};

// A single change to the asked configuration that fits with the margin (all asked layers offloaded).
struct FitSuggestion {
  int32_t slots = 0, ctx = 0, gpu_layers = 0;
  std::string kv_type;
  std::string change;  // in EngineOptions' words: "slots 2", "ctx 2048", "kvType q8_0", "gpuLayers 20"
};

// What the fit decided and what the plan uses (ModelInfo.fit, fitModel()).
struct FitReport {
  bool on = false;      // the fitter ran for this model
  std::string status;   // "fits" | "adjusted" (the fitter changed layers or context) | "does_not_fit"
  int32_t gpu_layers = 0, n_layer = 0, ctx = 0, slots = 0;
  bool unified = false;  // one KV pool the slots share: ctx is then what one sequence may use
  int32_t pool = 0;      // KV cells in all (ctx x slots without a shared pool)
  std::string kv_type;
  uint64_t margin = 0;
  std::vector<FitDeviceUse> devices;  // the offload devices, in order
  FitDeviceUse host;                  // free/total: MemAvailable/MemTotal
  std::vector<std::string> changes;   // what the fitter changed, in words
  std::string reason;                 // does_not_fit: what would not fit where; else less margin than asked, or ""
  std::vector<FitSuggestion> suggestions;
  std::vector<std::string> log;       // the fitter's own lines (common/fit.cpp)
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

// A backend buffer llama.cpp allocated while loading (from its "<name> <kind> buffer size" lines).
struct BufferDesc {
  std::string kind;    // "model" | "kv" | "compute" | "output"
  std::string buffer;  // buffer type: "CPU", "CPU_Mapped", "Vulkan0", "CUDA0", "RPC0[host:port]"…
  double mib = 0;
};

struct FimTokens {
  llama_token prefix = -1, suffix = -1, middle = -1, pad = -1, rep = -1, sep = -1;
};

struct ModelInfo {
  std::string description, architecture;
  uint64_t params = 0, size_bytes = 0;
  // ctx: the most one sequence may hold (prompt and answer). pool: the KV cells of the context in
  // all; with kv_unified the slots share them (ctx = min(pool, train_ctx)), else ctx x slots.
  int32_t train_ctx = 0, ctx = 0, pool = 0, slots = 0, vocab_size = 0;
  bool kv_unified = false;
  // Recurrent layers (Mamba, RWKV, gated delta nets; hybrids such as Qwen3.5): a sequence's state
  // cannot be cut back to an earlier position, only replaced by a copy taken there.
  bool recurrent = false;
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
  int32_t admit_window_ms = 0;       // resolved from EngineConfig
  bool flash_attn = false;
  BackendLoadReport backends;
  bool cpu_repack = true;
  int32_t deterministic = 0;  // the mask SetCpuDeterministic set (0: off)
  bool op_offload = true;
  std::vector<BufferDesc> buffers;
  // Embedding models: the context makes pooled embeddings, not text (see EngineConfig.embeddings).
  bool embedding = false;
  std::string pooling;       // "mean", "cls", "last", "rank" (embedding models; rank: rerankers)
  int32_t n_embd = 0;        // embedding size (rank: the classifier's outputs, n_cls_out)
  // Rerankers: how a query-document pair becomes one input, as llama-server lays it out
  // (tools/server format_prompt_rerank): the GGUF's "rerank" template with {query} and {document}
  // when it has one, else prefix + query + separator + document + suffix, from the vocabulary's
  // add-BOS/EOS/SEP flags.
  std::string rerank_template;
  std::vector<llama_token> rerank_prefix, rerank_separator, rerank_suffix;
  // Speculative decoding as loaded: the draft model's description ("" = none) and what it is
  // ("model": a draft model; "eagle3", "dflash", "dspark": a drafter reading the hidden states), n-gram on/off.
  std::string draft_model;
  std::string draft_kind;
  std::string mmproj;  // the projector's path ("" = the model reads text only)
  bool spec_ngram = false;
  std::string ngram_kind;  // spec_ngram's kind ("" without n-gram drafts)
  bool spec_mtp = false;  // drafts come from the model's MTP head
  int32_t draft_max = 0;
  FitReport fit;  // fit.on = false when the model was loaded without fitting
};

DeviceDesc DescribeDevice(ggml_backend_dev_t dev);

}  // namespace strata
