#include "memory_fit.h"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <stdexcept>

#include "../src/llama-ext.h"  // llama_get_memory_breakdown (LLAMA_API, the staging header of the pinned source)
#include "common_log.h"
#include "draft_head.h"
#include "fit.h"  // llama.cpp's fitter: common/fit.h of the pinned source
#include "llama_log.h"
#include "placement.h"

namespace strata {

namespace {

// An unreadable file is left to the load to report.
bool IsHeadDrafter(const std::string& path) {
  try {
    return ReadDrafterFile(path).kind != HeadKind::kNone;
  } catch (const std::exception&) {
    return false;
  }
}

// The fitter sets llama's global logger while it measures: one fit at a time per process.
std::mutex g_fit_mutex;

constexpr int64_t kMiB = int64_t{1} << 20;

std::string Mib(int64_t bytes) { return std::to_string((bytes + kMiB / 2) / kMiB) + " MiB"; }

struct HostMemory {
  int64_t available = 0, total = 0;
};

// MemAvailable / MemTotal: ggml's CPU device reports the machine's RAM as free and total alike.
HostMemory ReadHostMemory() {
  HostMemory h;
  FILE* f = std::fopen("/proc/meminfo", "r");
  if (!f) return h;
  char line[256];
  while (std::fgets(line, sizeof line, f)) {
    char key[64];
    long long kb = 0;
    if (std::sscanf(line, "%63[^:]: %lld", key, &kb) != 2) continue;
    if (std::strcmp(key, "MemAvailable") == 0) h.available = kb * 1024;
    if (std::strcmp(key, "MemTotal") == 0) h.total = kb * 1024;
  }
  std::fclose(f);
  return h;
}

// What one configuration uses per device (our device order) and on the host; of it, what the
// drafting context takes (its share alone, in bytes).
struct Plan {
  std::vector<FitDeviceUse> devices;
  FitDeviceUse host;
  std::vector<uint64_t> drafting;
  uint64_t drafting_host = 0;
};

// The drafting context beside the model's: a draft model, a drafter that reads the model's hidden
// states (EAGLE-3, DFlash: its context is made with the model's as ctx_other), or the model's MTP
// head (an MTP context of the model itself: no weights of its own). Its n_ctx, sequences and pool
// follow the model's context.
struct DraftAsk {
  std::string path;  // the model's own for the MTP head
  llama_model_params mp{};
  llama_context_params cp{};
  bool shares_model = false;
  bool reads_model = false;
};

void AddBreakdown(Plan& plan, const llama_context* ctx, const std::vector<ggml_backend_dev_t>& devs, bool weights) {
  for (const auto& [buft, mb] : llama_get_memory_breakdown(ctx)) {
    FitDeviceUse* into = &plan.host;
    const ggml_backend_dev_t dev = ggml_backend_buft_is_host(buft) ? nullptr : ggml_backend_buft_get_device(buft);
    for (size_t i = 0; dev && i < devs.size(); ++i) if (devs[i] == dev) into = &plan.devices[i];
    if (weights) into->model += mb.model;
    into->context += mb.context;
    into->compute += mb.compute;
  }
}

llama_model* LoadNoAlloc(const std::string& path, llama_model_params mp) {
  mp.no_alloc = true;
  mp.load_mode = LLAMA_LOAD_MODE_NONE;
  llama_model* model = llama_model_load_from_file(path.c_str(), mp);
  if (!model) throw std::runtime_error("cannot read " + path + " to measure it");
  return model;
}

// What the model and a context of cp take per buffer type, with `draft`'s beside them when given,
// measured by llama.cpp's no-alloc load (metadata only) and its memory breakdown: buffers of an
// offload device count for it, every other one (host buffers, and the CPU's extra buffer types such
// as CPU_REPACK, which common/fit.cpp's per-device figures leave out as it assumes unlimited host
// memory) for the host. hidden[i]: bytes of devs[i] that other models hold and the device does not
// report as used.
Plan Measure(const std::string& path, const llama_model_params& mp, const llama_context_params& cp,
             const std::vector<ggml_backend_dev_t>& devs, const std::vector<int64_t>& hidden, const DraftAsk* draft) {
  llama_model* model = LoadNoAlloc(path, mp);
  llama_context* ctx = llama_init_from_model(model, cp);
  if (!ctx) {
    llama_model_free(model);
    throw std::runtime_error("cannot measure a context of " + std::to_string(cp.n_ctx) + " tokens for " + path);
  }
  Plan plan;
  for (ggml_backend_dev_t dev : devs) {
    FitDeviceUse d;
    d.device = ggml_backend_dev_name(dev);
    size_t free = 0, total = 0;
    ggml_backend_dev_memory(dev, &free, &total);
    d.free = static_cast<int64_t>(free) - hidden[plan.devices.size()];
    d.total = static_cast<int64_t>(total);
    plan.devices.push_back(d);
  }
  plan.host.device = "Host";
  AddBreakdown(plan, ctx, devs, true);
  std::string failed;
  if (draft) {
    llama_model* dmodel = nullptr;
    llama_context* dctx = nullptr;
    try {
      dmodel = draft->shares_model ? model : LoadNoAlloc(draft->path, draft->mp);
      llama_context_params dcp = draft->cp;
      dcp.n_ctx = cp.n_ctx;
      dcp.n_seq_max = cp.n_seq_max;
      dcp.kv_unified = cp.kv_unified;
      if (draft->reads_model) dcp.ctx_other = ctx;
      dctx = llama_init_from_model(dmodel, dcp);
      if (!dctx) throw std::runtime_error("cannot measure the drafting context of " + draft->path);
      const Plan before = plan;
      AddBreakdown(plan, dctx, devs, !draft->shares_model);
      for (size_t i = 0; i < devs.size(); ++i) plan.drafting.push_back(plan.devices[i].used() - before.devices[i].used());
      plan.drafting_host = plan.host.used() - before.host.used();
    } catch (const std::exception& e) {
      failed = e.what();
    }
    if (dctx) llama_free(dctx);
    if (dmodel && dmodel != model) llama_model_free(dmodel);
  }
  llama_free(ctx);
  llama_model_free(model);
  if (!failed.empty()) throw std::runtime_error(failed);
  const HostMemory h = ReadHostMemory();
  plan.host.free = h.available;
  plan.host.total = h.total;
  return plan;
}

// "" when every device keeps `margin` bytes free and the host's part fits MemAvailable; else where not.
std::string Overflow(const Plan& plan, int64_t margin) {
  for (const FitDeviceUse& d : plan.devices) {
    if (d.total == 0) continue;  // a device that reports no memory (the fitter does not use it either)
    const int64_t left = d.free - static_cast<int64_t>(d.used());
    if (left < margin) {
      return d.device + " needs " + Mib(static_cast<int64_t>(d.used())) + " of its " + Mib(d.free) + " free" +
             (margin > 0 ? " (keeping " + Mib(margin) + " free)" : "");
    }
  }
  if (plan.host.free > 0 && static_cast<int64_t>(plan.host.used()) > plan.host.free) {
    return "host RAM: " + Mib(static_cast<int64_t>(plan.host.used())) + " needed, " + Mib(plan.host.free) + " available";
  }
  return "";
}

}  // namespace

FitReport FitModelParams(const EngineConfig& cfg, ModelParams& p, bool search) {
  std::lock_guard<std::mutex> lock(g_fit_mutex);
  FitReport r;
  r.on = true;
  r.margin = cfg.fit_margin;
  r.slots = cfg.slots;
  r.kv_type = KvTypeName(cfg.kv_type);
  r.n_layer = p.n_layer;
  r.unified = p.unified;
  const int32_t all_layers = p.n_layer + 1;  // the output layer counts
  const bool offload = !p.devs.empty();
  const int32_t wish_layers = !offload ? 0 : cfg.gpu_layers_given && cfg.gpu_layers >= 0 ? std::min(cfg.gpu_layers, all_layers) : all_layers;
  const int32_t default_ctx = static_cast<int32_t>(p.train_ctx > 0 ? std::min<int64_t>(4096, p.train_ctx) : 4096);
  // The KV cells of `per_slot` tokens on `slots` slots: each its own, or one pool they share (at
  // most the training context, which one sequence may then use whole).
  auto cells = [&](int64_t per_slot, int32_t slots, bool unified) {
    const int64_t all = per_slot * slots;
    return static_cast<uint32_t>(unified && p.train_ctx > 0 ? std::min<int64_t>(all, p.train_ctx) : all);
  };
  // What one sequence may use of a context of n cells.
  auto seq_ctx = [&](uint32_t n, int32_t slots, bool unified) {
    return static_cast<int32_t>(!unified ? n / static_cast<uint32_t>(slots) : p.train_ctx > 0 ? std::min<int64_t>(n, p.train_ctx) : n);
  };

  // The asked parameters, kept: suggestions start from them, not from what the fitter made of them.
  const llama_model_params mp_asked = p.mp;
  const llama_context_params cp_asked = p.cp;
  std::vector<float> split_asked = p.split;
  std::vector<float> split_draft = p.split;
  // The drafting context is fitted with the model's, as llama.cpp's own fit does for a draft model
  // and the MTP head. A drafter that reads the model's hidden states is measured with the model's
  // context (ctx_other), which the fitter cannot do: its use at the least context is margin there.
  DraftAsk draft;
  draft.mp = mp_asked;
  draft.mp.tensor_split = split_draft.data();
  draft.cp = cp_asked;
  draft.cp.embeddings = false;
  draft.cp.pooling_type = LLAMA_POOLING_TYPE_UNSPECIFIED;
  draft.cp.n_rs_seq = 0;
  draft.shares_model = p.mtp_head;
  if (p.mtp_head) {
    draft.path = cfg.model;
    draft.cp.ctx_type = LLAMA_CONTEXT_TYPE_MTP;
  } else if (!cfg.spec.draft_model.empty()) {
    draft.path = cfg.spec.draft_model;
    draft.reads_model = IsHeadDrafter(draft.path);
  }
  const DraftAsk* drafting = draft.path.empty() ? nullptr : &draft;
  const common_fit_extra_model extra{draft.path.c_str(), &draft.mp, &draft.cp, draft.shares_model};
  const common_fit_extra_model* fit_extra = drafting && !draft.reads_model ? &extra : nullptr;

  // Memory other models of this server hold that a device does not report as used (the model pool
  // says how much it holds): extra margin there, so two models never both count it as free.
  std::vector<int64_t> hidden(p.devs.size(), 0);
  std::vector<size_t> margins(llama_max_devices(), static_cast<size_t>(cfg.fit_margin));
  for (size_t i = 0; i < p.devs.size(); ++i) {
    const auto held = cfg.fit_reserved.find(ggml_backend_dev_name(p.devs[i]));
    if (held == cfg.fit_reserved.end()) continue;
    size_t free = 0, total = 0;
    ggml_backend_dev_memory(p.devs[i], &free, &total);
    hidden[i] = std::max<int64_t>(0, static_cast<int64_t>(held->second) - static_cast<int64_t>(total - free));
    margins[i] += static_cast<size_t>(hidden[i]);
  }
  auto measure = [&](const llama_model_params& mp, const llama_context_params& cp) {
    return Measure(cfg.model, mp, cp, p.devs, hidden, drafting);
  };
  // An automatic context, measured as asked: the least the fitter would choose (--fit-ctx, at most the training context).
  const int32_t base_ctx = cfg.ctx > 0 ? cfg.ctx : static_cast<int32_t>(p.train_ctx > 0 ? std::min<int64_t>(cfg.fit_ctx_min, p.train_ctx) : cfg.fit_ctx_min);

  const uint32_t base_cells = cells(base_ctx, cfg.slots, p.unified);
  // On the CPU alone the fitter measures against the machine's whole RAM (ggml's CPU device
  // reports it as free): what other processes use is margin too, so the plan fits MemAvailable.
  if (p.devs.empty()) {
    const HostMemory h = ReadHostMemory();
    if (h.total > h.available) margins[0] += static_cast<size_t>(h.total - h.available);
  }

  LlamaLogCapture quiet(true);
  CommonLogSink sink(&r.log);
  // A drafter the fitter cannot measure (it reads the model's context): what it takes at the least
  // context is margin for the fitter (its weights; its KV grows with the context, one layer's or a few).
  if (search && fit_extra == nullptr && drafting) {
    llama_context_params cp = cp_asked;
    cp.n_ctx = base_cells;
    const Plan both = measure(mp_asked, cp);
    for (size_t i = 0; i < p.devs.size(); ++i) margins[i] += both.drafting[i];
    if (p.devs.empty()) margins[0] += both.drafting_host;
  }
  common_params_fit_status status = COMMON_PARAMS_FIT_STATUS_SUCCESS;
  if (search) {
    // A shared pool is one stream: its least is --fit-ctx for every slot (at most the training context).
    const uint32_t n_ctx_min = p.unified ? base_cells : static_cast<uint32_t>(cfg.fit_ctx_min);
    status = common_fit_params(cfg.model.c_str(), &p.mp, &p.cp, p.split.data(), p.overrides.data(), margins.data(),
                               n_ctx_min, fit_extra, GGML_LOG_LEVEL_ERROR);
    if (status == COMMON_PARAMS_FIT_STATUS_ERROR) {
      throw std::runtime_error("cannot measure " + cfg.model + " to fit it to memory" + (r.log.empty() ? "" : ": " + r.log.back()));
    }
  } else if (p.cp.n_ctx == 0) {
    p.cp.n_ctx = base_cells;
  }
  if (p.cp.n_ctx == 0) p.cp.n_ctx = cells(default_ctx, cfg.slots, p.unified);  // the fitter stopped before choosing
  r.gpu_layers = !offload ? 0 : p.mp.n_gpu_layers < 0 ? all_layers : std::min(p.mp.n_gpu_layers, all_layers);
  r.pool = static_cast<int32_t>(std::min<uint32_t>(p.cp.n_ctx, INT32_MAX));
  r.ctx = seq_ctx(p.cp.n_ctx, cfg.slots, p.unified);
  if (r.gpu_layers < wish_layers) {
    r.changes.push_back("gpuLayers " + std::to_string(wish_layers) + " -> " + std::to_string(r.gpu_layers) + " (of " +
                        std::to_string(all_layers) + "; the rest on the CPU)");
  }
  size_t partial = 0;
  for (const llama_model_tensor_buft_override* o = p.mp.tensor_buft_overrides; o && o->pattern; ++o) partial++;
  if (partial > 0) r.changes.push_back("part of " + std::to_string(partial) + " layer(s) on the CPU (tensor overrides)");
  if (cfg.ctx == 0 && search) {
    r.changes.push_back("ctx " + std::to_string(r.ctx) + (p.unified ? " shared by the slots (" : " per slot (") +
                        (r.ctx < p.train_ctx ? "the most that fits; training context " + std::to_string(p.train_ctx) : "the training context") + ")");
  }

  Plan plan = measure(p.mp, p.cp);
  PlacementAsk ask{cfg.split_mode, cfg.main_gpu, r.gpu_layers, p.split};
  for (const PlacementDesc& pl : ComputePlacement(ask, p.devs, p.n_layer)) {
    for (FitDeviceUse& d : plan.devices) if (d.device == pl.device) d.layers = pl.layers;
    if (ggml_backend_dev_t dev = ggml_backend_dev_by_name(pl.device.c_str()); dev && ggml_backend_dev_type(dev) == GGML_BACKEND_DEVICE_TYPE_CPU) {
      plan.host.layers = pl.layers;
    }
  }
  r.devices = plan.devices;
  r.host = plan.host;

  const std::string overflow = Overflow(plan, 0);
  const bool shrunk = r.gpu_layers < wish_layers || partial > 0 || (search && cfg.ctx == 0 && r.ctx < p.train_ctx);
  if (!overflow.empty()) {
    r.status = "does_not_fit";
    r.reason = overflow;
  } else {
    r.status = shrunk ? "adjusted" : "fits";
    const std::string tight = Overflow(plan, static_cast<int64_t>(cfg.fit_margin));
    if (!tight.empty()) r.reason = "less free memory left than the margin: " + tight;
  }

  // What would fit with every asked layer offloaded: the usual single changes, each measured.
  if (r.status == "does_not_fit" || r.gpu_layers < wish_layers || partial > 0) {
    // `ctx` per slot; with `unified`, as the pool the slots share.
    auto fits = [&](int32_t slots, int32_t ctx, ggml_type kv, bool unified) {
      llama_model_params mp = mp_asked;
      std::vector<float> split = split_asked;
      mp.tensor_split = split.data();
      mp.tensor_buft_overrides = nullptr;
      mp.n_gpu_layers = offload ? (cfg.gpu_layers_given ? cfg.gpu_layers : -1) : 0;
      llama_context_params cp = cp_asked;
      cp.n_seq_max = static_cast<uint32_t>(slots);
      cp.n_ctx = cells(ctx, slots, unified);
      cp.kv_unified = unified;
      cp.type_k = kv;
      cp.type_v = kv;
      try {
        return Overflow(measure(mp, cp), static_cast<int64_t>(offload ? cfg.fit_margin : 0)).empty();
      } catch (const std::exception&) {
        return false;
      }
    };
    auto suggest = [&](int32_t slots, int32_t ctx, ggml_type kv, int32_t layers, const std::string& change) {
      r.suggestions.push_back({slots, ctx, layers, KvTypeName(kv), change});
    };
    for (int32_t s = cfg.slots / 2; s >= 1; s /= 2) {
      if (fits(s, base_ctx, cfg.kv_type, p.unified)) {
        suggest(s, seq_ctx(cells(base_ctx, s, p.unified), s, p.unified), cfg.kv_type, wish_layers, "slots " + std::to_string(s));
        break;
      }
    }
    // "ctx N" is --ctx N: a context per slot.
    for (int32_t c = base_ctx / 2; c >= 256; c /= 2) {
      if (fits(cfg.slots, c, cfg.kv_type, false)) { suggest(cfg.slots, c, cfg.kv_type, wish_layers, "ctx " + std::to_string(c)); break; }
    }
    if (cfg.flash_attn != LLAMA_FLASH_ATTN_TYPE_DISABLED) {
      for (ggml_type kv : {GGML_TYPE_Q8_0, GGML_TYPE_Q4_0}) {
        if (ggml_type_size(kv) * ggml_blck_size(cfg.kv_type) >= ggml_type_size(cfg.kv_type) * ggml_blck_size(kv)) continue;  // not smaller
        if (fits(cfg.slots, base_ctx, kv, p.unified)) {
          suggest(cfg.slots, seq_ctx(base_cells, cfg.slots, p.unified), kv, wish_layers, std::string("kvType ") + KvTypeName(kv));
          break;
        }
      }
    }
    // Layers the user fixed: what the fitter itself would offload instead.
    if (r.status == "does_not_fit" && offload && (cfg.gpu_layers_given || !search)) {
      llama_model_params mp = mp_asked;
      std::vector<float> split = split_asked;
      std::vector<llama_model_tensor_buft_override> overrides(p.overrides.size(), llama_model_tensor_buft_override{nullptr, nullptr});
      mp.tensor_split = split.data();
      mp.n_gpu_layers = -1;
      llama_context_params cp = cp_asked;
      if (cp.n_ctx == 0) cp.n_ctx = base_cells;
      std::vector<std::string> discard;
      CommonLogSink quiet_sink(&discard);
      if (common_fit_params(cfg.model.c_str(), &mp, &cp, split.data(), overrides.data(), margins.data(), static_cast<uint32_t>(cfg.fit_ctx_min),
                            fit_extra, GGML_LOG_LEVEL_ERROR) == COMMON_PARAMS_FIT_STATUS_SUCCESS) {
        const int32_t layers = mp.n_gpu_layers < 0 ? all_layers : std::min(mp.n_gpu_layers, all_layers);
        try {
          if (Overflow(measure(mp, cp), 0).empty()) {
            suggest(cfg.slots, seq_ctx(cp.n_ctx, cfg.slots, p.unified), cfg.kv_type, layers,
                    "gpuLayers " + std::to_string(layers));
          }
        } catch (const std::exception&) { /* no suggestion */ }
      }
    }
  }
  return r;
}

std::string DescribeNoFit(const FitReport& r) {
  std::string out = "does not fit in memory: " + r.reason;
  if (r.suggestions.empty()) return out + "; no single change fits (fewer slots, a smaller context and a quantized KV cache were measured)";
  out += "; it would fit with ";
  for (size_t i = 0; i < r.suggestions.size(); ++i) {
    if (i > 0) out += i + 1 == r.suggestions.size() ? " or " : ", ";
    out += r.suggestions[i].change;
  }
  return out;
}

}  // namespace strata
