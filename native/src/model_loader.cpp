#include "model_loader.h"

#include <sys/stat.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <thread>

#include "gguf.h"
#include "llama_log.h"
#include "backends.h"
#include "memory_fit.h"
#include "placement.h"
#include "prompt_tokenizer.h"
#include "serial_device.h"

namespace strata {

namespace {

void CheckModelFile(const std::string& path) {
  struct stat st {};
  if (path.empty()) throw std::runtime_error("model path is empty");
  if (::stat(path.c_str(), &st) != 0) throw std::runtime_error("model file not found: " + path);
  if (S_ISDIR(st.st_mode)) throw std::runtime_error("model path is a folder, not a GGUF file: " + path);
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) throw std::runtime_error("cannot open model file " + path + ": " + std::strerror(errno));
  char magic[4] = {};
  const size_t n = std::fread(magic, 1, 4, f);
  std::fclose(f);
  if (n != 4 || std::memcmp(magic, "GGUF", 4) != 0) {
    throw std::runtime_error(path + " is not a GGUF file (it does not start with the GGUF magic)");
  }
}

// What the GGUF header says before anything loads: the training context, the layer count, the
// architecture and the pooling it declares (0 / "" / -1 where absent).
struct GgufFacts {
  int64_t train_ctx = 0;
  int64_t n_layer = 0;
  int64_t nextn_layers = 0;  // a multi-token-prediction head's layers
  // Recurrent layers (Mamba's and gated delta nets' state space, RWKV, short convolutions): a state
  // per sequence that cannot be cut back to an earlier position.
  bool recurrent = false;
  std::string arch;
  int32_t pooling = -1;  // llama_pooling_type, -1 = not declared
};

int64_t IntValue(const gguf_context* g, const std::string& key) {
  const int64_t id = gguf_find_key(g, key.c_str());
  if (id < 0) return -1;
  switch (gguf_get_kv_type(g, id)) {
    case GGUF_TYPE_UINT32: return gguf_get_val_u32(g, id);
    case GGUF_TYPE_INT32: return gguf_get_val_i32(g, id);
    case GGUF_TYPE_UINT64: return static_cast<int64_t>(gguf_get_val_u64(g, id));
    case GGUF_TYPE_INT64: return gguf_get_val_i64(g, id);
    default: return -1;
  }
}

GgufFacts ReadGgufFacts(const std::string& path) {
  gguf_init_params gp{};
  gp.no_alloc = true;
  gp.ctx = nullptr;
  LlamaLogCapture capture;
  gguf_context* g = gguf_init_from_file(path.c_str(), gp);
  if (!g) {
    const std::string why = capture.Errors();
    throw std::runtime_error(path + " is not a valid GGUF file" + (why.empty() ? "" : ": " + why));
  }
  GgufFacts f;
  const int64_t arch_id = gguf_find_key(g, "general.architecture");
  if (arch_id >= 0 && gguf_get_kv_type(g, arch_id) == GGUF_TYPE_STRING) {
    f.arch = gguf_get_val_str(g, arch_id);
    f.train_ctx = std::max<int64_t>(0, IntValue(g, f.arch + ".context_length"));
    f.n_layer = std::max<int64_t>(0, IntValue(g, f.arch + ".block_count"));
    f.nextn_layers = std::max<int64_t>(0, IntValue(g, f.arch + ".nextn_predict_layers"));
    f.pooling = static_cast<int32_t>(IntValue(g, f.arch + ".pooling_type"));
    for (const char* k : {".ssm.conv_kernel", ".ssm.state_size", ".wkv.head_size", ".shortconv.l_cache"}) {
      if (IntValue(g, f.arch + k) > 0) f.recurrent = true;
    }
  }
  gguf_free(g);
  return f;
}

std::string KnownDevices() {
  std::string out;
  for (size_t i = 0; i < ggml_backend_dev_count(); ++i) {
    if (!out.empty()) out += ", ";
    out += ggml_backend_dev_name(ggml_backend_dev_get(i));
  }
  return out.empty() ? "none" : out;
}

bool IsRpcDevice(ggml_backend_dev_t dev) {
  return std::strcmp(ggml_backend_reg_name(ggml_backend_dev_backend_reg(dev)), "RPC") == 0;
}

// Offload devices in llama's order: the requested ones by name (CPU means "host only"), or
// by default this config's RPC servers, then GPUs, then integrated GPUs if there is no GPU.
std::vector<ggml_backend_dev_t> ResolveDevices(const EngineConfig& cfg, const std::vector<ggml_backend_dev_t>& rpc) {
  std::vector<ggml_backend_dev_t> out;
  if (cfg.devices_given) {
    for (const auto& name : cfg.devices) {
      ggml_backend_dev_t dev = ggml_backend_dev_by_name(name.c_str());
      if (!dev) throw std::runtime_error("unknown device \"" + name + "\" (known devices: " + KnownDevices() + ")");
      if (ggml_backend_dev_type(dev) == GGML_BACKEND_DEVICE_TYPE_CPU) continue;
      if (std::find(out.begin(), out.end(), dev) != out.end()) {
        throw std::runtime_error("device \"" + name + "\" is listed twice");
      }
      out.push_back(dev);
    }
    return out;
  }
  out = rpc;
  std::vector<ggml_backend_dev_t> igpus;
  // One GPU seen by two backends (CUDA0 and Vulkan0 on one NVIDIA card) is used once, through the
  // backend loaded first (CUDA: installed backends load CUDA before Vulkan), as llama.cpp does.
  auto same_gpu = [](ggml_backend_dev_t a, ggml_backend_dev_t b) {
    ggml_backend_dev_props pa{}, pb{};
    ggml_backend_dev_get_props(a, &pa);
    ggml_backend_dev_get_props(b, &pb);
    return pa.device_id != nullptr && pb.device_id != nullptr && std::strcmp(pa.device_id, pb.device_id) == 0;
  };
  for (size_t i = 0; i < ggml_backend_dev_count(); ++i) {
    ggml_backend_dev_t dev = ggml_backend_dev_get(i);
    const auto type = ggml_backend_dev_type(dev);
    if (type == GGML_BACKEND_DEVICE_TYPE_GPU && !IsRpcDevice(dev) &&
        std::none_of(out.begin(), out.end(), [&](ggml_backend_dev_t d) { return same_gpu(d, dev); })) {
      out.push_back(dev);
    }
    // An integrated GPU seen by several backends: only the first backend's devices.
    if (type == GGML_BACKEND_DEVICE_TYPE_IGPU &&
        (igpus.empty() || ggml_backend_dev_backend_reg(dev) == ggml_backend_dev_backend_reg(igpus.back()))) {
      igpus.push_back(dev);
    }
  }
  if (out.size() == rpc.size()) out.insert(out.end(), igpus.begin(), igpus.end());
  return out;
}

void FillInfo(LoadedModel& m, const EngineConfig& cfg, int32_t ctx, bool flash_attn) {
  ModelInfo& info = m.info;
  const llama_vocab* vocab = llama_model_get_vocab(m.model);
  char buf[512];
  llama_model_desc(m.model, buf, sizeof buf);
  info.description = buf;
  info.params = llama_model_n_params(m.model);
  info.size_bytes = llama_model_size(m.model);
  info.train_ctx = llama_model_n_ctx_train(m.model);
  info.ctx = ctx;
  info.slots = cfg.slots;
  info.vocab_size = llama_vocab_n_tokens(vocab);
  info.recurrent = llama_model_is_recurrent(m.model) || llama_model_is_hybrid(m.model);
  info.bos = llama_vocab_bos(vocab);
  info.eos = llama_vocab_eos(vocab);
  info.eot = llama_vocab_eot(vocab);
  info.fim = {llama_vocab_fim_pre(vocab), llama_vocab_fim_suf(vocab), llama_vocab_fim_mid(vocab),
              llama_vocab_fim_pad(vocab), llama_vocab_fim_rep(vocab), llama_vocab_fim_sep(vocab)};
  info.has_fim = info.fim.prefix >= 0 && info.fim.suffix >= 0 && info.fim.middle >= 0;
  const char* tmpl = llama_model_chat_template(m.model, nullptr);
  info.has_chat_template = tmpl != nullptr;
  info.chat_template = tmpl ? tmpl : "";
  info.control_texts = ControlTokenTexts(vocab);
  const int32_t n_meta = llama_model_meta_count(m.model);
  std::vector<char> val(1 << 16);
  for (int32_t i = 0; i < n_meta; ++i) {
    if (llama_model_meta_key_by_index(m.model, i, buf, sizeof buf) < 0) continue;
    int32_t n = llama_model_meta_val_str_by_index(m.model, i, val.data(), val.size());
    if (n < 0) continue;
    if (static_cast<size_t>(n) >= val.size()) {
      val.resize(static_cast<size_t>(n) + 1);
      n = llama_model_meta_val_str_by_index(m.model, i, val.data(), val.size());
    }
    info.metadata[buf] = std::string(val.data(), static_cast<size_t>(std::max(n, 0)));
  }
  auto arch = info.metadata.find("general.architecture");
  info.architecture = arch != info.metadata.end() ? arch->second : "";
  info.kv_type = KvTypeName(cfg.kv_type);
  info.flash_attn = flash_attn;
}

// "<func>: <buffer> <kind> buffer size = <x> MiB" lines of llama.cpp's load (llama-model.cpp,
// llama-kv-cache.cpp, llama-memory-recurrent.cpp, llama-context.cpp of the pinned source): where
// weights, KV and compute buffers went. The C API has no call that says which device holds the KV
// cache. A recurrent state ("RS") is the context's memory as the KV cache is: kind "kv".
void CollectBuffers(const std::vector<std::string>& lines, std::vector<BufferDesc>& out) {
  static const std::string kMarker = " buffer size = ";
  for (const std::string& line : lines) {
    const size_t at = line.find(kMarker);
    if (at == std::string::npos) continue;
    std::vector<std::string> words;
    size_t i = line.find(':');
    i = i == std::string::npos || i > at ? 0 : i + 1;
    while (i < at) {
      const size_t start = line.find_first_not_of(' ', i);
      if (start == std::string::npos || start >= at) break;
      const size_t end = std::min(line.find(' ', start), at);
      words.push_back(line.substr(start, end - start));
      i = end;
    }
    if (words.size() < 2) continue;
    std::string kind = words.back();
    if (kind == "KV" || kind == "RS") kind = "kv";
    if (kind != "model" && kind != "kv" && kind != "compute" && kind != "output") continue;
    out.push_back({kind, words[words.size() - 2], std::strtod(line.c_str() + at + kMarker.size(), nullptr)});
  }
}

// Encoder architectures read a whole input at once and make embeddings, never text.
bool IsEncoderArch(const std::string& arch) {
  static const char* kEncoders[] = {"bert", "nomic-bert", "nomic-bert-moe", "jina-bert-v2", "jina-bert-v3",
                                    "neo-bert", "eurobert", "modern-bert"};
  return std::any_of(std::begin(kEncoders), std::end(kEncoders), [&](const char* a) { return arch == a; });
}

// Whether the engine makes embeddings with this model, and with which pooling (llama's enum).
bool WantsEmbeddings(const EngineConfig& cfg, const GgufFacts& facts, enum llama_pooling_type* pooling) {
  const std::string& arch = facts.arch;
  *pooling = facts.pooling < 0 ? LLAMA_POOLING_TYPE_UNSPECIFIED : static_cast<enum llama_pooling_type>(facts.pooling);
  const bool pooled = *pooling != LLAMA_POOLING_TYPE_UNSPECIFIED && *pooling != LLAMA_POOLING_TYPE_NONE;
  if (cfg.embeddings == 0) {
    if (IsEncoderArch(arch)) throw std::runtime_error("embeddings 'off': the " + arch + " architecture only makes embeddings");
    return false;
  }
  const bool on = cfg.embeddings == 1 || pooled || IsEncoderArch(arch);
  if (on && !pooled) *pooling = LLAMA_POOLING_TYPE_MEAN;  // a model that declares none: mean, like llama-server
  return on;
}

const char* PoolingName(enum llama_pooling_type p) {
  switch (p) {
    case LLAMA_POOLING_TYPE_MEAN: return "mean";
    case LLAMA_POOLING_TYPE_CLS: return "cls";
    case LLAMA_POOLING_TYPE_LAST: return "last";
    case LLAMA_POOLING_TYPE_RANK: return "rank";
    default: return "none";
  }
}

// Rerankers put out one score per classifier label (llama_get_embeddings_seq gives n_cls_out
// floats); a pair is laid out as llama-server's format_prompt_rerank does.
void FillRerankLayout(const llama_model* model, ModelInfo& info) {
  info.n_embd = static_cast<int32_t>(llama_model_n_cls_out(model));
  const char* tmpl = llama_model_chat_template(model, "rerank");
  info.rerank_template = tmpl ? tmpl : "";
  const llama_vocab* vocab = llama_model_get_vocab(model);
  llama_token eos = llama_vocab_eos(vocab);
  if (eos == LLAMA_TOKEN_NULL) eos = llama_vocab_sep(vocab);
  if (llama_vocab_get_add_bos(vocab)) info.rerank_prefix.push_back(llama_vocab_bos(vocab));
  if (llama_vocab_get_add_eos(vocab)) info.rerank_separator.push_back(eos);
  if (llama_vocab_get_add_sep(vocab)) info.rerank_separator.push_back(llama_vocab_sep(vocab));
  if (llama_vocab_get_add_eos(vocab)) info.rerank_suffix.push_back(eos);
}

// The draft model must tokenize exactly as the target: same size and the same text per token.
void CheckSameVocab(const llama_model* target, const llama_model* draft, const std::string& path) {
  const llama_vocab* a = llama_model_get_vocab(target);
  const llama_vocab* b = llama_model_get_vocab(draft);
  const int32_t n = llama_vocab_n_tokens(a);
  if (llama_vocab_n_tokens(b) != n) {
    throw std::runtime_error("draft model " + path + " has " + std::to_string(llama_vocab_n_tokens(b)) +
                             " tokens, the model " + std::to_string(n) + ": speculative decoding needs the same vocabulary");
  }
  for (int32_t i = 0; i < n; ++i) {
    if (std::strcmp(llama_vocab_get_text(a, i), llama_vocab_get_text(b, i)) != 0) {
      throw std::runtime_error("draft model " + path + " differs from the model at token " + std::to_string(i) +
                               ": speculative decoding needs the same vocabulary");
    }
  }
  if (llama_vocab_bos(a) != llama_vocab_bos(b) || llama_vocab_eos(a) != llama_vocab_eos(b)) {
    throw std::runtime_error("draft model " + path + " has other BOS/EOS tokens than the model");
  }
}

// One throwaway decode, as llama-server does at start: the first decode pays one-time costs
// (weight repacking, buffer allocation) that would otherwise land on the first request.
llama_token WarmupToken(const llama_model* model) {
  const llama_vocab* vocab = llama_model_get_vocab(model);
  llama_token tok = llama_vocab_bos(vocab);
  if (tok < 0) tok = llama_vocab_eos(vocab);
  return tok < 0 ? 0 : tok;
}

void Warmup(llama_context* ctx, llama_model* model) {
  llama_token tok = WarmupToken(model);
  DecodeAlone(ctx, llama_batch_get_one(&tok, 1));
  llama_memory_clear(llama_get_memory(ctx), true);
  llama_perf_context_reset(ctx);
}

// The draft model on the same devices, with a context of the target's shape (sequences, context
// per slot, batch) that shares the target's CPU thread pools. A drafter GGUF that reads the target's
// hidden states (EAGLE-3, DFlash, DSpark) becomes the model's head drafter instead. Their buffers
// go to `buffers`.
void LoadDraft(const EngineConfig& cfg, const llama_model_params& mp, llama_context_params cp, LoadedModel& m,
               std::vector<BufferDesc>& buffers) {
  const std::string& path = cfg.spec.draft_model;
  CheckModelFile(path);
  const DrafterFile file = ReadDrafterFile(path);
  llama_model* draft = nullptr;
  {
    LlamaLogCapture capture;
    draft = llama_model_load_from_file(path.c_str(), mp);
    if (!draft) {
      const std::string why = capture.Errors();
      throw std::runtime_error("failed to load draft model " + path + (why.empty() ? "" : ": " + why));
    }
    CollectBuffers(capture.Lines(), buffers);
  }
  try {
    CheckSameVocab(m.model, draft, path);
  } catch (...) {
    llama_model_free(draft);
    throw;
  }
  char desc[256];
  llama_model_desc(draft, desc, sizeof desc);
  m.info.draft_model = desc;
  m.info.draft_kind = file.kind == HeadKind::kNone ? "model" : HeadKindName(file.kind);
  if (file.kind != HeadKind::kNone) {
    LlamaLogCapture capture;
    try {
      m.head = std::make_shared<HeadDrafter>(file, draft, m.ctx, cp, cfg.slots, cfg.spec.draft_max, cfg.spec.draft_p_min);
    } catch (const std::exception& e) {
      const std::string why = capture.Errors();
      throw std::runtime_error("draft model " + path + ": " + e.what() + (why.empty() ? "" : ": " + why));
    }
    CollectBuffers(capture.Lines(), buffers);
    if (m.pools.pool) llama_attach_threadpool(m.head->ctx(), m.pools.pool, m.pools.batch);
    m.head->Warmup(WarmupToken(m.model));
    return;
  }
  m.draft_model = draft;
  cp.n_rs_seq = 0;  // a recurrent draft model's cuts are not its last decode's: it starts over instead
  cp.embeddings = false;
  cp.pooling_type = LLAMA_POOLING_TYPE_UNSPECIFIED;
  LlamaLogCapture capture;
  m.draft_ctx = llama_init_from_model(m.draft_model, cp);
  if (!m.draft_ctx) {
    const std::string why = capture.Errors();
    throw std::runtime_error("failed to create the draft model's context" + (why.empty() ? "" : ": " + why));
  }
  CollectBuffers(capture.Lines(), buffers);
  if (m.pools.pool) llama_attach_threadpool(m.draft_ctx, m.pools.pool, m.pools.batch);
  Warmup(m.draft_ctx, m.draft_model);
}

// Drafting from the model's own MTP head: with mtp 'on', or 'auto' when the model has one and no
// draft model is given. Its context has the target's shape and shares its CPU thread pools; its
// buffers go to `buffers`.
void LoadMtp(const EngineConfig& cfg, const llama_context_params& cp, bool embedding, LoadedModel& m,
             std::vector<BufferDesc>& buffers) {
  const bool has = MtpLayersOf(m.model) > 0;
  const bool draft_given = !cfg.spec.draft_model.empty();
  if (cfg.spec.mtp == 1 && !has) {
    throw std::runtime_error("speculative mtp: " + cfg.model + " has no MTP layers (nextn_predict_layers)");
  }
  if (cfg.spec.mtp == 1 && draft_given) throw std::runtime_error("speculative mtp drafts with the model's own head: give no draftModel");
  if (cfg.spec.mtp == 1 && embedding) throw std::runtime_error("speculative decoding is for text models; this one makes embeddings");
  if (!has || embedding || cfg.spec.mtp == 0 || draft_given) return;
  LlamaLogCapture capture;
  try {
    m.head = std::make_shared<HeadDrafter>(m.model, m.ctx, cp, cfg.slots, cfg.spec.draft_max, cfg.spec.draft_p_min);
  } catch (const std::exception& e) {
    const std::string why = capture.Errors();
    throw std::runtime_error(std::string(e.what()) + (why.empty() ? "" : ": " + why));
  }
  CollectBuffers(capture.Lines(), buffers);
  if (m.pools.pool) llama_attach_threadpool(m.head->ctx(), m.pools.pool, m.pools.batch);
  m.head->Warmup(WarmupToken(m.model));
}

// The llama parameters `cfg` asks for, on `devs`: what the fitter adjusts and the load uses.
void MakeParams(const EngineConfig& cfg, const GgufFacts& facts, bool embedding, enum llama_pooling_type pooling,
                const std::vector<ggml_backend_dev_t>& devs, uint32_t n_ctx, ModelParams& p) {
  p.devs = devs;
  p.dev_list = devs;
  p.dev_list.push_back(nullptr);
  p.split.assign(llama_max_devices(), 0.0f);
  std::copy(cfg.tensor_split.begin(), cfg.tensor_split.end(), p.split.begin());
  p.overrides.assign(llama_max_tensor_buft_overrides(), llama_model_tensor_buft_override{nullptr, nullptr});
  p.train_ctx = facts.train_ctx;
  p.n_layer = static_cast<int32_t>(facts.n_layer);

  p.mp = llama_model_default_params();
  p.mp.devices = p.dev_list.data();
  p.mp.n_gpu_layers = cfg.gpu_layers;
  p.mp.split_mode = cfg.split_mode;
  p.mp.main_gpu = cfg.main_gpu;
  p.mp.tensor_split = p.split.data();
  p.mp.use_extra_bufts = cfg.cpu_repack && !cfg.deterministic;
  p.mp.load_mtp = cfg.spec.mtp != 0;  // a model without MTP layers loads the same
  p.mtp_head = facts.nextn_layers > 0 && cfg.spec.mtp != 0 && cfg.spec.draft_model.empty() && !embedding;  // as LoadMtp

  p.cp = llama_context_default_params();
  const int32_t hw = static_cast<int32_t>(std::max(1u, std::thread::hardware_concurrency()));
  p.cp.n_ctx = n_ctx;  // 0: the fitter chooses
  p.cp.n_seq_max = static_cast<uint32_t>(cfg.slots);
  p.cp.kv_unified = p.unified;
  p.cp.n_batch = static_cast<uint32_t>(cfg.batch);
  p.cp.n_ubatch = static_cast<uint32_t>(cfg.ubatch > 0 ? cfg.ubatch : std::min(cfg.batch, 512));
  p.cp.n_threads = cfg.threads > 0 ? cfg.threads : hw;
  p.cp.n_threads_batch = cfg.threads_batch > 0 ? cfg.threads_batch : p.cp.n_threads;
  p.cp.type_k = cfg.kv_type;
  p.cp.type_v = cfg.kv_type;
  p.cp.flash_attn_type = cfg.flash_attn;
  p.cp.no_perf = false;
  p.cp.op_offload = cfg.op_offload;
  // A rejected draft must leave a recurrent state as it was: llama.cpp keeps each sequence's last
  // draft_max + 1 states to roll back to, when the engine drafts for every request (the MTP head,
  // a draft model, n-grams), as llama-server does. Without, such a model takes no drafts.
  const bool drafts = p.mtp_head || !cfg.spec.draft_model.empty() || cfg.spec.ngram;
  if (facts.recurrent && drafts && !embedding) p.cp.n_rs_seq = static_cast<uint32_t>(std::max(cfg.spec.draft_max, 0));
  if (embedding) {
    // An input is read in one step (encoders need it in one ubatch); pooled vectors come out.
    p.cp.embeddings = true;
    p.cp.pooling_type = pooling;
    p.cp.n_ubatch = p.cp.n_batch;
  }
}

}  // namespace

DeviceDesc DescribeDevice(ggml_backend_dev_t dev) {
  DeviceDesc d;
  d.name = ggml_backend_dev_name(dev);
  d.description = ggml_backend_dev_description(dev);
  d.type = DeviceTypeName(ggml_backend_dev_type(dev));
  ggml_backend_reg_t reg = ggml_backend_dev_backend_reg(dev);
  d.backend = reg ? ggml_backend_reg_name(reg) : "";
  size_t free = 0, total = 0;
  ggml_backend_dev_memory(dev, &free, &total);
  d.memory_free = free;
  d.memory_total = total;
  return d;
}

FitReport FitModel(const EngineConfig& cfg, bool search) {
  ModelParams p;
  EngineConfig fitting = cfg;
  fitting.fit = 1;
  PrepareParams(fitting, p);
  return FitModelParams(fitting, p, search);
}

void PrepareParams(const EngineConfig& cfg, ModelParams& p, BackendLoadReport* backends) {
  CheckModelFile(cfg.model);
  const GgufFacts facts = ReadGgufFacts(cfg.model);
  const int64_t train = facts.train_ctx;
  if (train > 0 && cfg.ctx > train) {
    throw std::runtime_error("ctx " + std::to_string(cfg.ctx) + " is over the model's training context (" +
                             std::to_string(train) + " tokens)");
  }
  if (cfg.kv_type != GGML_TYPE_F16 && cfg.flash_attn == LLAMA_FLASH_ATTN_TYPE_DISABLED) {
    throw std::runtime_error(std::string("kvType ") + KvTypeName(cfg.kv_type) +
                             " needs flash attention (flashAttn 'auto' or 'on')");
  }
  enum llama_pooling_type pooling = LLAMA_POOLING_TYPE_UNSPECIFIED;
  const bool embedding = WantsEmbeddings(cfg, facts, &pooling);
  if (embedding && (cfg.spec.ngram || !cfg.spec.draft_model.empty())) {
    throw std::runtime_error("speculative decoding is for text models; this one makes embeddings");
  }

  InstallLlamaLog();
  const BackendLoadReport loaded = LoadBackends(cfg.backends);
  if (backends) *backends = loaded;
  const std::vector<ggml_backend_dev_t> rpc = AddRpcServers(cfg.rpc);
  const std::vector<ggml_backend_dev_t> devs = ResolveDevices(cfg, rpc);
  NoteSerialDevices(devs);
  if (cfg.split_mode == LLAMA_SPLIT_MODE_NONE && !devs.empty() && cfg.main_gpu >= static_cast<int32_t>(devs.size())) {
    throw std::runtime_error("mainGpu " + std::to_string(cfg.main_gpu) + " is out of range (" +
                             std::to_string(devs.size()) + " offload devices)");
  }
  if (cfg.tensor_split.size() > std::max<size_t>(devs.size(), 1)) {
    throw std::runtime_error("tensorSplit has " + std::to_string(cfg.tensor_split.size()) + " entries for " +
                             std::to_string(devs.size()) + " offload devices");
  }
  // No context given: a text model's slots share one KV pool, so one sequence may use all of it.
  p.unified = cfg.ctx == 0 && !embedding;
  // 'auto' fits when the model goes to an offload device, or to size the shared pool.
  const bool offload = !devs.empty() && cfg.gpu_layers != 0;
  p.fit = cfg.fit == 1 || (cfg.fit == -1 && (offload || p.unified));
  p.fit_strict = cfg.fit == 1 || offload;
  // Without the fitter: --ctx per slot, else min(4096, training context) per slot, shared as
  // min(4096 x slots, training context); with it, the fitter chooses.
  const int64_t slots = cfg.slots;
  const int64_t per_slot = cfg.ctx > 0 ? cfg.ctx : train > 0 ? std::min<int64_t>(4096, train) : 4096;
  const int64_t n_ctx = cfg.ctx > 0 ? per_slot * slots : p.fit ? 0
      : p.unified && train > 0 ? std::min<int64_t>(4096 * slots, train) : p.unified ? 4096 * slots : per_slot * slots;
  MakeParams(cfg, facts, embedding, pooling, devs, static_cast<uint32_t>(n_ctx), p);
}

LoadedModel LoadModel(const EngineConfig& cfg) {
  ModelParams p;
  BackendLoadReport backends;
  PrepareParams(cfg, p, &backends);
  // Before any compute of this engine (the CPU library is loaded now); process-wide, sticky.
  const int32_t deterministic = cfg.deterministic ? SetCpuDeterministic(0) : 0;
  // The draft model loads on the asked placement (the fitter's tensor split and overrides are the target's).
  std::vector<float> draft_split = p.split;
  llama_model_params draft_mp = p.mp;
  draft_mp.tensor_split = draft_split.data();
  FitReport fit;
  if (p.fit) {
    fit = FitModelParams(cfg, p, true);
    if (fit.status == "does_not_fit" && p.fit_strict) throw std::runtime_error(cfg.model + " " + DescribeNoFit(fit));
  }
  const int32_t ctx = static_cast<int32_t>(p.unified ? p.cp.n_ctx : p.cp.n_ctx / static_cast<uint32_t>(cfg.slots));

  LoadedModel m;
  std::vector<BufferDesc> buffers;
  {
    LlamaLogCapture capture;
    m.model = llama_model_load_from_file(cfg.model.c_str(), p.mp);
    if (!m.model) {
      const std::string why = capture.Errors();
      throw std::runtime_error("failed to load model " + cfg.model + (why.empty() ? "" : ": " + why));
    }
    CollectBuffers(capture.Lines(), buffers);
  }
  PlacementAsk ask{cfg.split_mode, cfg.main_gpu, p.mp.n_gpu_layers, p.split};
  const std::vector<PlacementDesc> placement = ComputePlacement(ask, p.devs, llama_model_n_layer(m.model));
  const bool embedding = p.cp.embeddings;

  bool flash_attn = cfg.flash_attn == LLAMA_FLASH_ATTN_TYPE_ENABLED;
  {
    LlamaLogCapture capture;
    m.ctx = llama_init_from_model(m.model, p.cp);
    if (!m.ctx) {
      const std::string why = capture.Errors();
      llama_model_free(m.model);
      m.model = nullptr;
      throw std::runtime_error("failed to create the context (" +
                               (p.unified ? std::to_string(ctx) + " tokens shared by " : "ctx " + std::to_string(ctx) + " x ") +
                               std::to_string(cfg.slots) + " slots)" + (why.empty() ? "" : ": " + why));
    }
    if (cfg.flash_attn == LLAMA_FLASH_ATTN_TYPE_AUTO) {
      flash_attn = capture.Contains("Flash Attention enabled") || capture.Contains("enabling flash_attn");
    }
    CollectBuffers(capture.Lines(), buffers);
  }
  m.pools = AttachCpuThreadpools(m.ctx, p.cp.n_threads, p.cp.n_threads_batch);
  if (!cfg.spec.draft_model.empty()) {
    try {
      LoadDraft(cfg, draft_mp, p.cp, m, buffers);
    } catch (...) {
      FreeLoadedModel(m);
      throw;
    }
  }
  try {
    LoadMtp(cfg, p.cp, embedding, m, buffers);
  } catch (...) {
    FreeLoadedModel(m);
    throw;
  }
  // After the drafting loads: a head has the model keep hidden states, which grows the model's
  // output buffer, and on lavapipe a buffer reallocated after the model's first decode corrupted
  // the heap (a load in three crashed with the 152K vocabulary; none in 32 loads warmed up after).
  Warmup(m.ctx, m.model);
  if (!cfg.mmproj.empty()) {
    if (embedding) {
      FreeLoadedModel(m);
      throw std::runtime_error("mmproj: " + cfg.model + " is an embedding model; a projector goes with a text model");
    }
    LlamaLogCapture capture;
    try {
      m.vision = std::make_shared<Vision>(cfg.mmproj, m.model, p.cp.n_threads_batch, p.mp.n_gpu_layers != 0 && !p.devs.empty());
    } catch (const std::exception& e) {
      const std::string why = capture.Errors();
      FreeLoadedModel(m);
      throw std::runtime_error(std::string("mmproj: ") + e.what() + (why.empty() ? "" : ": " + why));
    }
  }
  m.devices = p.devs;
  if (ggml_backend_dev_t cpu = ggml_backend_dev_by_type(GGML_BACKEND_DEVICE_TYPE_CPU)) m.devices.push_back(cpu);
  FillInfo(m, cfg, ctx, flash_attn);
  if (p.unified) {
    // llama rounds the pool up to 256 cells; one sequence may use all of it, up to the training context.
    m.info.pool = static_cast<int32_t>(llama_n_ctx(m.ctx));
    m.info.ctx = m.info.train_ctx > 0 ? std::min(m.info.pool, m.info.train_ctx) : m.info.pool;
    m.info.kv_unified = true;
  } else {
    m.info.pool = static_cast<int32_t>(std::min<int64_t>(int64_t{ctx} * cfg.slots, INT32_MAX));
  }
  m.info.placement = placement;
  m.info.backends = backends;
  m.info.cpu_repack = cfg.cpu_repack && !cfg.deterministic;
  m.info.deterministic = deterministic;
  m.info.op_offload = cfg.op_offload;
  m.info.buffers = std::move(buffers);
  m.info.embedding = embedding;
  m.info.pooling = embedding ? PoolingName(p.cp.pooling_type) : "";
  m.info.n_embd = llama_model_n_embd_out(m.model) > 0 ? llama_model_n_embd_out(m.model) : llama_model_n_embd(m.model);
  if (embedding && p.cp.pooling_type == LLAMA_POOLING_TYPE_RANK) FillRerankLayout(m.model, m.info);
  m.info.spec_ngram = cfg.spec.ngram && !m.head;  // a head drafts in place of n-grams
  m.info.ngram_kind = m.info.spec_ngram ? cfg.spec.ngram_kind : "";
  m.info.spec_mtp = m.head && m.head->kind() == HeadKind::kMtp;
  m.info.draft_max = m.head ? m.head->draft_max() : cfg.spec.ngram || m.draft_model ? cfg.spec.draft_max : 0;
  m.info.mmproj = m.vision ? cfg.mmproj : "";
  m.info.batch = cfg.batch;
  const bool cpu_only = p.devs.empty() || p.mp.n_gpu_layers == 0;
  m.info.decode_prompt_budget = cfg.decode_prompt_budget > 0 ? std::min(cfg.decode_prompt_budget, cfg.batch)
                                : cpu_only ? std::min(64, cfg.batch) : cfg.batch;
  m.info.admit_window_ms = cfg.admit_window_ms >= 0 ? cfg.admit_window_ms : cpu_only ? 8 : 0;
  m.info.fit = std::move(fit);
  return m;
}

void FreeLoadedModel(LoadedModel& m) {
  m.vision.reset();  // before the model it was made for
  m.head.reset();  // before the target's context, whose hidden states it reads
  if (m.draft_ctx) llama_free(m.draft_ctx);
  if (m.draft_model) llama_model_free(m.draft_model);
  m.draft_ctx = nullptr;
  m.draft_model = nullptr;
  if (m.ctx) llama_free(m.ctx);
  FreeCpuThreadpools(m.pools);
  if (m.model) llama_model_free(m.model);
  m.ctx = nullptr;
  m.model = nullptr;
}

}  // namespace strata
