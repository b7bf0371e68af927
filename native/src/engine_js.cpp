#include "engine_js.h"

#include "tools.h"

#include <cmath>
#include <cstring>
#include <string>

namespace strata {

namespace {

constexpr double kMaxSafeInteger = 9007199254740991.0;

std::string Num(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
  if (v == std::floor(v) && std::fabs(v) < 1e15) return std::to_string(static_cast<int64_t>(v));
  return std::to_string(v);
}

[[noreturn]] void TypeErr(Napi::Env env, const std::string& msg) { throw Napi::TypeError::New(env, msg); }
[[noreturn]] void RangeErr(Napi::Env env, const std::string& msg) { throw Napi::RangeError::New(env, msg); }

bool Present(const Napi::Object& o, const char* key) {
  if (!o.Has(key)) return false;
  const Napi::Value v = o.Get(key);
  return !v.IsUndefined();
}

double Number(const Napi::Value& v, const std::string& field) {
  if (!v.IsNumber()) TypeErr(v.Env(), field + " must be a number");
  return v.As<Napi::Number>().DoubleValue();
}

double FiniteIn(const Napi::Value& v, const std::string& field, double lo, double hi) {
  const double x = Number(v, field);
  if (!std::isfinite(x) || x < lo || x > hi) {
    RangeErr(v.Env(), field + " must be between " + Num(lo) + " and " + Num(hi) + " (got " + Num(x) + ")");
  }
  return x;
}

int64_t IntIn(const Napi::Value& v, const std::string& field, double lo, double hi) {
  const double x = Number(v, field);
  if (!std::isfinite(x) || x != std::floor(x)) TypeErr(v.Env(), field + " must be an integer (got " + Num(x) + ")");
  if (x < lo || x > hi) RangeErr(v.Env(), field + " must be between " + Num(lo) + " and " + Num(hi) + " (got " + Num(x) + ")");
  return static_cast<int64_t>(x);
}

std::string Str(const Napi::Value& v, const std::string& field) {
  if (!v.IsString()) TypeErr(v.Env(), field + " must be a string");
  return v.As<Napi::String>().Utf8Value();
}

std::vector<std::string> StrArray(const Napi::Value& v, const std::string& field, size_t max_n) {
  if (!v.IsArray()) TypeErr(v.Env(), field + " must be an array of strings");
  const Napi::Array a = v.As<Napi::Array>();
  if (a.Length() > max_n) RangeErr(v.Env(), field + " has more than " + std::to_string(max_n) + " entries");
  std::vector<std::string> out;
  for (uint32_t i = 0; i < a.Length(); ++i) out.push_back(Str(a.Get(i), field + "[" + std::to_string(i) + "]"));
  return out;
}

template <typename T>
T Enum(const Napi::Value& v, const std::string& field, std::initializer_list<std::pair<const char*, T>> values) {
  const std::string s = Str(v, field);
  std::string names;
  for (const auto& p : values) {
    if (s == p.first) return p.second;
    names += names.empty() ? "" : ", ";
    names += std::string("'") + p.first + "'";
  }
  RangeErr(v.Env(), field + " must be one of " + names + " (got '" + s + "')");
}

}  // namespace

EngineConfig ParseEngineOptions(const Napi::Object& o) {
  Napi::Env env = o.Env();
  EngineConfig c;
  if (!Present(o, "model")) TypeErr(env, "model must be a path to a GGUF file");
  c.model = Str(o.Get("model"), "model");
  if (c.model.empty()) RangeErr(env, "model must not be empty");
  if (Present(o, "devices")) {
    c.devices_given = true;
    c.devices = StrArray(o.Get("devices"), "devices", 64);
  }
  if (Present(o, "rpc")) c.rpc = StrArray(o.Get("rpc"), "rpc", 16);
  if (Present(o, "splitMode")) {
    c.split_mode = Enum<llama_split_mode>(o.Get("splitMode"), "splitMode",
        {{"none", LLAMA_SPLIT_MODE_NONE}, {"layer", LLAMA_SPLIT_MODE_LAYER}, {"row", LLAMA_SPLIT_MODE_ROW}});
  }
  if (Present(o, "tensorSplit")) {
    const Napi::Value v = o.Get("tensorSplit");
    if (!v.IsArray()) TypeErr(env, "tensorSplit must be an array of numbers");
    const Napi::Array a = v.As<Napi::Array>();
    if (a.Length() > llama_max_devices()) RangeErr(env, "tensorSplit has more entries than devices ggml supports");
    for (uint32_t i = 0; i < a.Length(); ++i) {
      c.tensor_split.push_back(static_cast<float>(FiniteIn(a.Get(i), "tensorSplit[" + std::to_string(i) + "]", 0, 1e9)));
    }
  }
  if (Present(o, "mainGpu")) c.main_gpu = static_cast<int32_t>(IntIn(o.Get("mainGpu"), "mainGpu", 0, 255));
  if (Present(o, "gpuLayers")) c.gpu_layers = static_cast<int32_t>(IntIn(o.Get("gpuLayers"), "gpuLayers", -1, 100000));
  if (Present(o, "ctx")) c.ctx = static_cast<int32_t>(IntIn(o.Get("ctx"), "ctx", 16, 16 * 1024 * 1024));
  if (Present(o, "slots")) {
    c.slots = static_cast<int32_t>(IntIn(o.Get("slots"), "slots", 1, static_cast<double>(llama_max_parallel_sequences())));
  }
  if (Present(o, "batch")) c.batch = static_cast<int32_t>(IntIn(o.Get("batch"), "batch", 1, 1 << 20));
  if (c.batch < c.slots) {
    RangeErr(env, "batch (" + std::to_string(c.batch) + ") must be at least slots (" + std::to_string(c.slots) +
                      "): every decoding slot adds a token each step");
  }
  if (Present(o, "ubatch")) c.ubatch = static_cast<int32_t>(IntIn(o.Get("ubatch"), "ubatch", 1, c.batch));
  if (Present(o, "threads")) c.threads = static_cast<int32_t>(IntIn(o.Get("threads"), "threads", 1, 1024));
  if (Present(o, "threadsBatch")) c.threads_batch = static_cast<int32_t>(IntIn(o.Get("threadsBatch"), "threadsBatch", 1, 1024));
  if (Present(o, "decodePromptBudget")) {
    c.decode_prompt_budget = static_cast<int32_t>(IntIn(o.Get("decodePromptBudget"), "decodePromptBudget", 0, 1 << 20));
  }
  if (Present(o, "kvType")) {
    c.kv_type = Enum<ggml_type>(o.Get("kvType"), "kvType",
        {{"f16", GGML_TYPE_F16}, {"q8_0", GGML_TYPE_Q8_0}, {"q4_0", GGML_TYPE_Q4_0}});
  }
  if (Present(o, "flashAttn")) {
    c.flash_attn = Enum<llama_flash_attn_type>(o.Get("flashAttn"), "flashAttn",
        {{"auto", LLAMA_FLASH_ATTN_TYPE_AUTO}, {"on", LLAMA_FLASH_ATTN_TYPE_ENABLED}, {"off", LLAMA_FLASH_ATTN_TYPE_DISABLED}});
  }
  if (Present(o, "parkBudgetMiB")) c.park_budget_mib = FiniteIn(o.Get("parkBudgetMiB"), "parkBudgetMiB", 0, 1 << 24);
  if (Present(o, "freeRamFloorMiB")) c.free_ram_floor_mib = FiniteIn(o.Get("freeRamFloorMiB"), "freeRamFloorMiB", 0, 1 << 24);
  if (Present(o, "traceSteps")) c.trace_steps = static_cast<int32_t>(IntIn(o.Get("traceSteps"), "traceSteps", 0, 1 << 20));
  if (Present(o, "cpuVariant")) c.backends.cpu_variant = Str(o.Get("cpuVariant"), "cpuVariant");
  if (Present(o, "backendDirs")) c.backends.dirs = StrArray(o.Get("backendDirs"), "backendDirs", 16);
  if (Present(o, "cpuRepack")) {
    const Napi::Value v = o.Get("cpuRepack");
    if (!v.IsBoolean()) TypeErr(env, "cpuRepack must be a boolean");
    c.cpu_repack = v.As<Napi::Boolean>().Value();
  }
  return c;
}

std::vector<llama_token> ParseTokens(const Napi::Value& v, const char* field, int32_t n_vocab, bool allow_empty) {
  Napi::Env env = v.Env();
  std::vector<llama_token> out;
  const std::string f = field;
  if (v.IsTypedArray() && v.As<Napi::TypedArray>().TypedArrayType() == napi_int32_array) {
    const Napi::Int32Array a = v.As<Napi::Int32Array>();
    out.assign(a.Data(), a.Data() + a.ElementLength());
  } else if (v.IsArray()) {
    const Napi::Array a = v.As<Napi::Array>();
    out.reserve(a.Length());
    for (uint32_t i = 0; i < a.Length(); ++i) {
      const Napi::Value t = a.Get(i);
      if (!t.IsNumber()) TypeErr(env, f + "[" + std::to_string(i) + "] must be a token id (number)");
      const double x = t.As<Napi::Number>().DoubleValue();
      if (x != std::floor(x) || !std::isfinite(x)) TypeErr(env, f + "[" + std::to_string(i) + "] must be an integer token id");
      if (x < 0 || x >= n_vocab) {
        RangeErr(env, f + "[" + std::to_string(i) + "]: token " + Num(x) + " is outside the vocabulary (0.." +
                          std::to_string(n_vocab - 1) + ")");
      }
      out.push_back(static_cast<llama_token>(x));
    }
  } else {
    TypeErr(env, f + " must be an array of token ids or an Int32Array");
  }
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] < 0 || out[i] >= n_vocab) {
      RangeErr(env, f + "[" + std::to_string(i) + "]: token " + std::to_string(out[i]) +
                        " is outside the vocabulary (0.." + std::to_string(n_vocab - 1) + ")");
    }
  }
  if (out.empty() && !allow_empty) RangeErr(env, f + " is empty");
  return out;
}

static SamplingParams ParseSampling(const Napi::Value& v, const ModelInfo& info) {
  Napi::Env env = v.Env();
  SamplingParams p;
  if (!v.IsObject()) TypeErr(env, "sampling must be an object");
  const Napi::Object o = v.As<Napi::Object>();
  if (Present(o, "temperature")) p.temperature = static_cast<float>(FiniteIn(o.Get("temperature"), "sampling.temperature", 0, 100));
  if (Present(o, "topK")) p.top_k = static_cast<int32_t>(IntIn(o.Get("topK"), "sampling.topK", 0, info.vocab_size));
  if (Present(o, "topP")) {
    p.top_p = static_cast<float>(FiniteIn(o.Get("topP"), "sampling.topP", 0, 1));
    if (p.top_p <= 0) RangeErr(env, "sampling.topP must be above 0 (got 0)");
  }
  if (Present(o, "minP")) p.min_p = static_cast<float>(FiniteIn(o.Get("minP"), "sampling.minP", 0, 1));
  if (Present(o, "seed")) p.seed = static_cast<uint32_t>(IntIn(o.Get("seed"), "sampling.seed", 0, 4294967295.0));
  if (Present(o, "repeatPenalty")) {
    p.repeat_penalty = static_cast<float>(FiniteIn(o.Get("repeatPenalty"), "sampling.repeatPenalty", 0, 100));
    if (p.repeat_penalty <= 0) RangeErr(env, "sampling.repeatPenalty must be above 0 (got 0)");
  }
  if (Present(o, "repeatLastN")) {
    p.repeat_last_n = static_cast<int32_t>(IntIn(o.Get("repeatLastN"), "sampling.repeatLastN", -1, info.ctx));
    if (p.repeat_last_n < 0) p.repeat_last_n = info.ctx;  // -1 = the whole context, as in llama-server
  }
  if (Present(o, "frequencyPenalty")) p.frequency_penalty = static_cast<float>(FiniteIn(o.Get("frequencyPenalty"), "sampling.frequencyPenalty", -2, 2));
  if (Present(o, "presencePenalty")) p.presence_penalty = static_cast<float>(FiniteIn(o.Get("presencePenalty"), "sampling.presencePenalty", -2, 2));
  if (Present(o, "logitBias")) {
    const Napi::Value lb = o.Get("logitBias");
    if (!lb.IsArray()) TypeErr(env, "sampling.logitBias must be an array of [token, bias] pairs");
    const Napi::Array a = lb.As<Napi::Array>();
    for (uint32_t i = 0; i < a.Length(); ++i) {
      const std::string f = "sampling.logitBias[" + std::to_string(i) + "]";
      const Napi::Value pair = a.Get(i);
      if (!pair.IsArray() || pair.As<Napi::Array>().Length() != 2) TypeErr(env, f + " must be a [token, bias] pair");
      const Napi::Array pa = pair.As<Napi::Array>();
      const auto tok = static_cast<llama_token>(IntIn(pa.Get(0u), f + "[0]", 0, info.vocab_size - 1));
      const double bias = Number(pa.Get(1u), f + "[1]");
      if (std::isnan(bias) || bias == INFINITY) RangeErr(env, f + "[1] must be a finite number or -Infinity");
      p.logit_bias.push_back({tok, static_cast<float>(bias)});
    }
  }
  return p;
}

GenerateRequest ParseRequest(const Napi::Value& v, const ModelInfo& info, const std::map<int64_t, uint64_t>& live) {
  Napi::Env env = v.Env();
  if (!v.IsObject()) TypeErr(env, "request must be an object");
  const Napi::Object o = v.As<Napi::Object>();
  GenerateRequest r;
  if (!Present(o, "id")) TypeErr(env, "id must be a positive safe integer");
  r.id = IntIn(o.Get("id"), "id", 1, kMaxSafeInteger);
  if (live.count(r.id)) RangeErr(env, "id " + std::to_string(r.id) + " is already in use by a live request");
  if (!Present(o, "prompt")) TypeErr(env, "prompt must be an array of token ids or an Int32Array");
  r.prompt = ParseTokens(o.Get("prompt"), "prompt", info.vocab_size, false);
  if (r.prompt.size() > static_cast<size_t>(info.ctx)) {
    RangeErr(env, "prompt has " + std::to_string(r.prompt.size()) + " tokens, more than the slot context (" +
                      std::to_string(info.ctx) + ")");
  }
  if (!Present(o, "maxTokens")) TypeErr(env, "maxTokens must be a non-negative integer");
  r.max_tokens = static_cast<int32_t>(IntIn(o.Get("maxTokens"), "maxTokens", 0, 2147483647.0));
  if (Present(o, "sampling")) r.sampling = ParseSampling(o.Get("sampling"), info);
  if (Present(o, "stop")) {
    r.stop = StrArray(o.Get("stop"), "stop", 64);
    for (size_t i = 0; i < r.stop.size(); ++i) {
      if (r.stop[i].empty()) RangeErr(env, "stop[" + std::to_string(i) + "] is an empty string");
    }
  }
  if (Present(o, "stopTokens")) r.stop_tokens = ParseTokens(o.Get("stopTokens"), "stopTokens", info.vocab_size, true);
  if (Present(o, "renderTokens")) r.render_tokens = ParseTokens(o.Get("renderTokens"), "renderTokens", info.vocab_size, true);
  if (Present(o, "ignoreEos")) {
    const Napi::Value b = o.Get("ignoreEos");
    if (!b.IsBoolean()) TypeErr(env, "ignoreEos must be a boolean");
    r.ignore_eos = b.As<Napi::Boolean>().Value();
  }
  if (Present(o, "cachePrompt")) {
    const Napi::Value b = o.Get("cachePrompt");
    if (!b.IsBoolean()) TypeErr(env, "cachePrompt must be a boolean");
    r.cache_prompt = b.As<Napi::Boolean>().Value();
  }
  if (Present(o, "priority")) r.priority = static_cast<int32_t>(IntIn(o.Get("priority"), "priority", -1e9, 1e9));
  return r;
}

Napi::Int32Array TokensToJs(Napi::Env env, const std::vector<llama_token>& tokens) {
  Napi::Int32Array a = Napi::Int32Array::New(env, tokens.size());
  if (!tokens.empty()) std::memcpy(a.Data(), tokens.data(), tokens.size() * sizeof(llama_token));
  return a;
}

Napi::Array EventsToJs(Napi::Env env, const std::vector<EngineEvent>& events) {
  Napi::Array out = Napi::Array::New(env, events.size());
  for (size_t i = 0; i < events.size(); ++i) {
    const EngineEvent& e = events[i];
    Napi::Object o = Napi::Object::New(env);
    o.Set("id", Napi::Number::New(env, static_cast<double>(e.id)));
    switch (e.type) {
      case EventType::Admitted:
        o.Set("type", "admitted");
        o.Set("slot", e.slot);
        o.Set("promptTokens", e.total);
        o.Set("reused", e.stats.reused);
        o.Set("restored", e.restored);
        break;
      case EventType::Progress:
        o.Set("type", "progress");
        o.Set("read", e.read);
        o.Set("total", e.total);
        break;
      case EventType::Tokens: {
        o.Set("type", "tokens");
        Napi::Array ids = Napi::Array::New(env, e.ids.size());
        for (size_t k = 0; k < e.ids.size(); ++k) ids.Set(static_cast<uint32_t>(k), e.ids[k]);
        o.Set("ids", ids);
        o.Set("text", Napi::String::New(env, e.text));
        break;
      }
      case EventType::Done:
        o.Set("type", "done");
        o.Set("finish", FinishReasonName(e.finish));
        if (!e.error.empty()) o.Set("error", Napi::String::New(env, e.error));
        o.Set("promptTokens", e.stats.prompt_tokens);
        o.Set("reused", e.stats.reused);
        o.Set("promptMs", e.stats.prompt_ms);
        o.Set("decodeMs", e.stats.decode_ms);
        o.Set("generated", e.stats.generated);
        o.Set("text", Napi::String::New(env, e.text));
        break;
    }
    out.Set(static_cast<uint32_t>(i), o);
  }
  return out;
}

Napi::Object DeviceToJs(Napi::Env env, const DeviceDesc& d) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("name", d.name);
  o.Set("description", d.description);
  o.Set("type", d.type);
  o.Set("backend", d.backend);
  o.Set("memoryFree", static_cast<double>(d.memory_free));
  o.Set("memoryTotal", static_cast<double>(d.memory_total));
  return o;
}

Napi::Object InfoToJs(Napi::Env env, const ModelInfo& m) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("description", m.description);
  o.Set("architecture", m.architecture);
  o.Set("params", static_cast<double>(m.params));
  o.Set("sizeBytes", static_cast<double>(m.size_bytes));
  o.Set("trainCtx", m.train_ctx);
  o.Set("ctx", m.ctx);
  o.Set("slots", m.slots);
  o.Set("vocabSize", m.vocab_size);
  o.Set("bos", m.bos);
  o.Set("eos", m.eos);
  o.Set("eot", m.eot);
  if (m.has_fim) {
    Napi::Object f = Napi::Object::New(env);
    f.Set("prefix", m.fim.prefix);
    f.Set("suffix", m.fim.suffix);
    f.Set("middle", m.fim.middle);
    f.Set("pad", m.fim.pad);
    f.Set("rep", m.fim.rep);
    f.Set("sep", m.fim.sep);
    o.Set("fim", f);
  } else {
    o.Set("fim", env.Null());
  }
  o.Set("chatTemplate", m.has_chat_template ? Napi::Value(Napi::String::New(env, m.chat_template)) : env.Null());
  Napi::Array control = Napi::Array::New(env, m.control_texts.size());
  for (size_t i = 0; i < m.control_texts.size(); ++i) control.Set(static_cast<uint32_t>(i), m.control_texts[i]);
  o.Set("controlTexts", control);
  Napi::Object meta = Napi::Object::New(env);
  for (const auto& kv : m.metadata) meta.Set(kv.first, kv.second);
  o.Set("metadata", meta);
  Napi::Array placement = Napi::Array::New(env, m.placement.size());
  for (size_t i = 0; i < m.placement.size(); ++i) {
    Napi::Object p = Napi::Object::New(env);
    p.Set("device", m.placement[i].device);
    p.Set("layers", m.placement[i].layers);
    p.Set("memoryFree", static_cast<double>(m.placement[i].memory_free));
    p.Set("memoryTotal", static_cast<double>(m.placement[i].memory_total));
    placement.Set(static_cast<uint32_t>(i), p);
  }
  o.Set("placement", placement);
  o.Set("kvType", m.kv_type);
  o.Set("flashAttn", m.flash_attn);
  o.Set("batch", m.batch);
  o.Set("decodePromptBudget", m.decode_prompt_budget);
  Napi::Object cpu = Napi::Object::New(env);
  cpu.Set("variant", m.backends.cpu_variant.empty() ? env.Null() : Napi::String::New(env, m.backends.cpu_variant));
  cpu.Set("repack", m.cpu_repack);
  o.Set("cpu", cpu);
  o.Set("backends", BackendReportToJs(env, m.backends));
  return o;
}

Napi::Object SnapshotToJs(Napi::Env env, const EngineSnapshot& s) {
  static const char* kStates[] = {"idle", "prompt", "decode"};
  Napi::Object o = Napi::Object::New(env);
  Napi::Array slots = Napi::Array::New(env, s.slots.size());
  for (size_t i = 0; i < s.slots.size(); ++i) {
    const SlotSnapshot& x = s.slots[i];
    Napi::Object so = Napi::Object::New(env);
    so.Set("slot", x.slot);
    so.Set("state", kStates[x.state]);
    so.Set("requestId", x.request_id < 0 ? env.Null() : Napi::Value(Napi::Number::New(env, static_cast<double>(x.request_id))));
    so.Set("heldTokens", x.held_tokens);
    so.Set("promptTokens", x.prompt_tokens);
    so.Set("generated", x.generated);
    slots.Set(static_cast<uint32_t>(i), so);
  }
  o.Set("slots", slots);
  o.Set("queued", s.queued);
  Napi::Object park = Napi::Object::New(env);
  Napi::Array entries = Napi::Array::New(env, s.park.size());
  for (size_t i = 0; i < s.park.size(); ++i) {
    Napi::Object e = Napi::Object::New(env);
    e.Set("tokens", s.park[i].tokens);
    e.Set("bytes", static_cast<double>(s.park[i].bytes));
    e.Set("lastUsedMs", s.park[i].last_used_ms);
    entries.Set(static_cast<uint32_t>(i), e);
  }
  park.Set("entries", entries);
  park.Set("bytes", static_cast<double>(s.park_bytes));
  park.Set("budget", static_cast<double>(s.park_budget));
  park.Set("hits", static_cast<double>(s.hits));
  park.Set("misses", static_cast<double>(s.misses));
  park.Set("evictions", static_cast<double>(s.evictions));
  park.Set("refusedLowRam", static_cast<double>(s.refused_low_ram));
  o.Set("park", park);
  Napi::Object totals = Napi::Object::New(env);
  totals.Set("promptTokens", static_cast<double>(s.prompt_tokens));
  totals.Set("reusedTokens", static_cast<double>(s.reused_tokens));
  totals.Set("promptComputed", static_cast<double>(s.prompt_computed));
  totals.Set("generated", static_cast<double>(s.generated));
  totals.Set("steps", static_cast<double>(s.steps));
  totals.Set("requests", static_cast<double>(s.requests));
  o.Set("totals", totals);
  return o;
}

Napi::Object TracesToJs(Napi::Env env, const std::vector<StepTraceRec>& steps, const std::vector<RequestTraceRec>& reqs) {
  Napi::Object o = Napi::Object::New(env);
  Napi::Array sa = Napi::Array::New(env, steps.size());
  for (size_t i = 0; i < steps.size(); ++i) {
    const StepTraceRec& t = steps[i];
    Napi::Object so = Napi::Object::New(env);
    so.Set("step", static_cast<double>(t.step));
    so.Set("t", t.t);
    so.Set("buildMs", t.build_ms);
    so.Set("decodeMs", t.decode_ms);
    so.Set("sampleMs", t.sample_ms);
    so.Set("detokMs", t.detok_ms);
    so.Set("decodeTokens", t.decode_tokens);
    so.Set("promptTokens", t.prompt_tokens);
    so.Set("sequences", t.sequences);
    sa.Set(static_cast<uint32_t>(i), so);
  }
  Napi::Array ra = Napi::Array::New(env, reqs.size());
  for (size_t i = 0; i < reqs.size(); ++i) {
    const RequestTraceRec& t = reqs[i];
    Napi::Object ro = Napi::Object::New(env);
    ro.Set("id", static_cast<double>(t.id));
    ro.Set("queued", t.queued);
    if (t.admitted >= 0) ro.Set("admitted", t.admitted);
    if (t.prompt_done >= 0) ro.Set("promptDone", t.prompt_done);
    if (t.first_token >= 0) ro.Set("firstToken", t.first_token);
    if (t.finished >= 0) ro.Set("finished", t.finished);
    if (t.slot >= 0) ro.Set("slot", t.slot);
    ro.Set("reused", t.reused);
    ro.Set("restored", t.restored);
    Napi::Array legs = Napi::Array::New(env, t.legs.size());
    for (size_t k = 0; k < t.legs.size(); ++k) {
      Napi::Object l = Napi::Object::New(env);
      l.Set("t", t.legs[k].t);
      l.Set("tokens", t.legs[k].tokens);
      l.Set("ms", t.legs[k].ms);
      legs.Set(static_cast<uint32_t>(k), l);
    }
    ro.Set("promptLegs", legs);
    ra.Set(static_cast<uint32_t>(i), ro);
  }
  o.Set("steps", sa);
  o.Set("requests", ra);
  return o;
}

const char* FinishReasonName(FinishReason reason) {
  switch (reason) {
    case FinishReason::Stop: return "stop";
    case FinishReason::Length: return "length";
    case FinishReason::Cancel: return "cancel";
    default: return "error";
  }
}

}  // namespace strata
