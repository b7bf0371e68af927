// JS values -> the engine's native types (engine options, requests), every field checked;
// engine_js_out.cpp converts the other way.
#include "engine_js.h"

#include <cmath>
#include <string>

#include "draft_ngram_llama.h"
#include "grammar.h"
#include "js_args.h"

namespace strata {

// The argument checks (TypeErr, IntIn, Str, Enum…) are the addon's one set, js_args.h.
using namespace js;

static SpeculativeConfig ParseSpeculative(const Napi::Value& v) {
  Napi::Env env = v.Env();
  if (!v.IsObject()) TypeErr(env, "speculative must be an object");
  Fields o(v.As<Napi::Object>(), "speculative");
  SpeculativeConfig sp;
  if (o.Has("ngram")) {
    const Napi::Value b = o.Get("ngram");
    if (!b.IsBoolean()) TypeErr(env, "speculative.ngram must be a boolean");
    sp.ngram = b.As<Napi::Boolean>().Value();
  }
  if (o.Has("draftModel")) sp.draft_model = Str(o.Get("draftModel"), "speculative.draftModel");
  if (o.Has("draftMax")) sp.draft_max = static_cast<int32_t>(IntIn(o.Get("draftMax"), "speculative.draftMax", 1, 256));
  if (o.Has("draftMin")) sp.draft_min = static_cast<int32_t>(IntIn(o.Get("draftMin"), "speculative.draftMin", 1, 256));
  if (o.Has("ngramMin")) sp.ngram_min = static_cast<int32_t>(IntIn(o.Get("ngramMin"), "speculative.ngramMin", 1, 64));
  if (o.Has("ngramMax")) sp.ngram_max = static_cast<int32_t>(IntIn(o.Get("ngramMax"), "speculative.ngramMax", 1, 64));
  if (o.Has("ngramKind")) {
    sp.ngram_kind = Str(o.Get("ngramKind"), "speculative.ngramKind");
    if (!IsNgramKind(sp.ngram_kind)) RangeErr(env, "speculative.ngramKind must be 'lookup', 'simple', 'map-k', 'map-k4v', 'mod' or 'cache'");
  }
  if (o.Has("mtp")) {
    const std::string m = Str(o.Get("mtp"), "speculative.mtp");
    if (m != "auto" && m != "on" && m != "off") RangeErr(env, "speculative.mtp must be 'auto', 'on' or 'off'");
    sp.mtp = m == "auto" ? -1 : m == "on" ? 1 : 0;
  }
  if (o.Has("draftPMin")) sp.draft_p_min = static_cast<float>(FiniteIn(o.Get("draftPMin"), "speculative.draftPMin", 0, 1));
  if (sp.ngram_min > sp.ngram_max) RangeErr(env, "speculative.ngramMin must not be above speculative.ngramMax");
  if (sp.draft_min > sp.draft_max) RangeErr(env, "speculative.draftMin must not be above speculative.draftMax");
  o.RejectUnread();
  return sp;
}

EngineConfig ParseEngineOptions(const Napi::Object& options) {
  Napi::Env env = options.Env();
  Fields o(options, "engine options");
  EngineConfig c;
  if (!o.Has("model")) TypeErr(env, "model must be a path to a GGUF file");
  c.model = Str(o.Get("model"), "model");
  if (c.model.empty()) RangeErr(env, "model must not be empty");
  if (o.Has("mmproj")) c.mmproj = Str(o.Get("mmproj"), "mmproj");
  if (o.Has("devices")) {
    c.devices_given = true;
    c.devices = StrArray(o.Get("devices"), "devices", 64);
  }
  if (o.Has("rpc")) c.rpc = StrArray(o.Get("rpc"), "rpc", 16);
  if (o.Has("splitMode")) {
    c.split_mode = Enum<llama_split_mode>(o.Get("splitMode"), "splitMode",
        {{"none", LLAMA_SPLIT_MODE_NONE}, {"layer", LLAMA_SPLIT_MODE_LAYER}, {"row", LLAMA_SPLIT_MODE_ROW}});
  }
  if (o.Has("tensorSplit")) {
    const Napi::Value v = o.Get("tensorSplit");
    if (!v.IsArray()) TypeErr(env, "tensorSplit must be an array of numbers");
    const Napi::Array a = v.As<Napi::Array>();
    if (a.Length() > llama_max_devices()) RangeErr(env, "tensorSplit has more entries than devices ggml supports");
    for (uint32_t i = 0; i < a.Length(); ++i) {
      c.tensor_split.push_back(static_cast<float>(FiniteIn(a.Get(i), "tensorSplit[" + std::to_string(i) + "]", 0, 1e9)));
    }
  }
  if (o.Has("mainGpu")) c.main_gpu = static_cast<int32_t>(IntIn(o.Get("mainGpu"), "mainGpu", 0, 255));
  if (o.Has("gpuLayers")) {
    c.gpu_layers = static_cast<int32_t>(IntIn(o.Get("gpuLayers"), "gpuLayers", -1, 100000));
    c.gpu_layers_given = true;
  }
  if (o.Has("ctx")) c.ctx = static_cast<int32_t>(IntIn(o.Get("ctx"), "ctx", 16, 16 * 1024 * 1024));
  if (o.Has("slots")) {
    c.slots = static_cast<int32_t>(IntIn(o.Get("slots"), "slots", 1, static_cast<double>(llama_max_parallel_sequences())));
  }
  if (o.Has("batch")) c.batch = static_cast<int32_t>(IntIn(o.Get("batch"), "batch", 1, 1 << 20));
  if (c.batch < c.slots) {
    RangeErr(env, "batch (" + std::to_string(c.batch) + ") must be at least slots (" + std::to_string(c.slots) +
                      "): every decoding slot adds a token each step");
  }
  if (o.Has("ubatch")) c.ubatch = static_cast<int32_t>(IntIn(o.Get("ubatch"), "ubatch", 1, c.batch));
  if (o.Has("threads")) c.threads = static_cast<int32_t>(IntIn(o.Get("threads"), "threads", 1, 1024));
  if (o.Has("threadsBatch")) c.threads_batch = static_cast<int32_t>(IntIn(o.Get("threadsBatch"), "threadsBatch", 1, 1024));
  if (o.Has("decodePromptBudget")) {
    c.decode_prompt_budget = static_cast<int32_t>(IntIn(o.Get("decodePromptBudget"), "decodePromptBudget", 0, 1 << 20));
  }
  if (o.Has("admitWindowMs")) c.admit_window_ms = static_cast<int32_t>(IntIn(o.Get("admitWindowMs"), "admitWindowMs", 0, 1000));
  if (o.Has("kvType")) {
    c.kv_type = Enum<ggml_type>(o.Get("kvType"), "kvType",
        {{"f16", GGML_TYPE_F16}, {"q8_0", GGML_TYPE_Q8_0}, {"q4_0", GGML_TYPE_Q4_0}});
  }
  if (o.Has("flashAttn")) {
    c.flash_attn = Enum<llama_flash_attn_type>(o.Get("flashAttn"), "flashAttn",
        {{"auto", LLAMA_FLASH_ATTN_TYPE_AUTO}, {"on", LLAMA_FLASH_ATTN_TYPE_ENABLED}, {"off", LLAMA_FLASH_ATTN_TYPE_DISABLED}});
  }
  if (o.Has("parkBudgetMiB")) c.park_budget_mib = FiniteIn(o.Get("parkBudgetMiB"), "parkBudgetMiB", 0, 1 << 24);
  if (o.Has("freeRamFloorMiB")) c.free_ram_floor_mib = FiniteIn(o.Get("freeRamFloorMiB"), "freeRamFloorMiB", 0, 1 << 24);
  if (o.Has("traceSteps")) c.trace_steps = static_cast<int32_t>(IntIn(o.Get("traceSteps"), "traceSteps", 0, 1 << 20));
  if (o.Has("cpuVariant")) c.backends.cpu_variant = Str(o.Get("cpuVariant"), "cpuVariant");
  if (o.Has("backendDirs")) c.backends.dirs = StrArray(o.Get("backendDirs"), "backendDirs", 16);
  if (o.Has("cpuRepack")) {
    const Napi::Value v = o.Get("cpuRepack");
    if (!v.IsBoolean()) TypeErr(env, "cpuRepack must be a boolean");
    c.cpu_repack = v.As<Napi::Boolean>().Value();
  }
  if (o.Has("deterministic")) {
    const Napi::Value v = o.Get("deterministic");
    if (!v.IsBoolean()) TypeErr(env, "deterministic must be a boolean");
    c.deterministic = v.As<Napi::Boolean>().Value();
  }
  if (o.Has("opOffload")) {
    const Napi::Value v = o.Get("opOffload");
    if (!v.IsBoolean()) TypeErr(env, "opOffload must be a boolean");
    c.op_offload = v.As<Napi::Boolean>().Value();
  }
  if (o.Has("speculative")) c.spec = ParseSpeculative(o.Get("speculative"));
  if (o.Has("embeddings")) {
    c.embeddings = Enum<int32_t>(o.Get("embeddings"), "embeddings", {{"auto", -1}, {"off", 0}, {"on", 1}});
  }
  if (o.Has("fit")) {
    const Napi::Value v = o.Get("fit");
    if (v.IsBoolean()) c.fit = v.As<Napi::Boolean>().Value() ? 1 : 0;
    else if (v.IsString() && v.As<Napi::String>().Utf8Value() == "auto") c.fit = -1;
    else TypeErr(env, "fit must be true, false or 'auto'");
  }
  if (o.Has("fitReserved")) {
    const Napi::Value v = o.Get("fitReserved");
    if (!v.IsObject() || v.IsArray()) TypeErr(env, "fitReserved must be an object of device name -> bytes");
    const Napi::Object r = v.As<Napi::Object>();
    const Napi::Array keys = r.GetPropertyNames();
    for (uint32_t i = 0; i < keys.Length(); ++i) {
      const std::string name = keys.Get(i).As<Napi::String>().Utf8Value();
      c.fit_reserved[name] = static_cast<uint64_t>(IntIn(r.Get(name), ("fitReserved." + name).c_str(), 0, 9.0e15));
    }
  }
  if (o.Has("fitMarginMiB")) {
    c.fit_margin = static_cast<uint64_t>(IntIn(o.Get("fitMarginMiB"), "fitMarginMiB", 0, 1 << 24)) << 20;
  }
  if (o.Has("fitCtxMin")) c.fit_ctx_min = static_cast<int32_t>(IntIn(o.Get("fitCtxMin"), "fitCtxMin", 256, 16 * 1024 * 1024));
  o.RejectUnread({"onEvents", "onFatal"});  // the callbacks: engine_wrap.cpp reads them
  return c;
}

std::vector<llama_token> ParseTokens(const Napi::Value& v, const char* field, int32_t n_vocab, bool allow_empty,
                                     bool placeholders) {
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
      if ((x < 0 && !(placeholders && x >= INT32_MIN)) || x >= n_vocab) {
        RangeErr(env, f + "[" + std::to_string(i) + "]: token " + Num(x) + " is outside the vocabulary (0.." +
                          std::to_string(n_vocab - 1) + ")");
      }
      out.push_back(static_cast<llama_token>(x));
    }
  } else {
    TypeErr(env, f + " must be an array of token ids or an Int32Array");
  }
  for (size_t i = 0; i < out.size(); ++i) {
    if ((out[i] < 0 && !placeholders) || out[i] >= n_vocab) {
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
  Fields o(v.As<Napi::Object>(), "sampling");
  if (o.Has("temperature")) p.temperature = static_cast<float>(FiniteIn(o.Get("temperature"), "sampling.temperature", 0, 100));
  if (o.Has("topK")) p.top_k = static_cast<int32_t>(IntIn(o.Get("topK"), "sampling.topK", 0, info.vocab_size));
  if (o.Has("topP")) {
    p.top_p = static_cast<float>(FiniteIn(o.Get("topP"), "sampling.topP", 0, 1));
    if (p.top_p <= 0) RangeErr(env, "sampling.topP must be above 0 (got 0)");
  }
  if (o.Has("minP")) p.min_p = static_cast<float>(FiniteIn(o.Get("minP"), "sampling.minP", 0, 1));
  if (o.Has("seed")) p.seed = static_cast<uint32_t>(IntIn(o.Get("seed"), "sampling.seed", 0, 4294967295.0));
  if (o.Has("repeatPenalty")) {
    p.repeat_penalty = static_cast<float>(FiniteIn(o.Get("repeatPenalty"), "sampling.repeatPenalty", 0, 100));
    if (p.repeat_penalty <= 0) RangeErr(env, "sampling.repeatPenalty must be above 0 (got 0)");
  }
  if (o.Has("repeatLastN")) {
    p.repeat_last_n = static_cast<int32_t>(IntIn(o.Get("repeatLastN"), "sampling.repeatLastN", -1, info.ctx));
    if (p.repeat_last_n < 0) p.repeat_last_n = info.ctx;  // -1 = the whole context, as in llama-server
  }
  if (o.Has("frequencyPenalty")) p.frequency_penalty = static_cast<float>(FiniteIn(o.Get("frequencyPenalty"), "sampling.frequencyPenalty", -2, 2));
  if (o.Has("presencePenalty")) p.presence_penalty = static_cast<float>(FiniteIn(o.Get("presencePenalty"), "sampling.presencePenalty", -2, 2));
  if (o.Has("logitBias")) {
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
  if (o.Has("thinkingBudget")) {
    const Napi::Value tb = o.Get("thinkingBudget");
    if (!tb.IsObject()) TypeErr(env, "sampling.thinkingBudget must be an object {tokens, open, close, inside}");
    Fields t(tb.As<Napi::Object>(), "sampling.thinkingBudget");
    p.think_budget = static_cast<int32_t>(IntIn(t.Get("tokens"), "sampling.thinkingBudget.tokens", 0, info.ctx));
    p.think_open = ParseTokens(t.Get("open"), "sampling.thinkingBudget.open", info.vocab_size, true);
    p.think_close = ParseTokens(t.Get("close"), "sampling.thinkingBudget.close", info.vocab_size, false);
    p.think_inside = t.Get("inside").ToBoolean().Value();
    t.RejectUnread();
  }
  o.RejectUnread();
  return p;
}

GenerateRequest ParseRequest(const Napi::Value& v, const ModelInfo& info, const llama_vocab* vocab,
                             const std::map<int64_t, uint64_t>& live, Vision* vision) {
  Napi::Env env = v.Env();
  if (!v.IsObject()) TypeErr(env, "request must be an object");
  if (info.embedding) RangeErr(env, "this is an embedding model (pooling " + info.pooling + "): it makes embeddings, not text");
  Fields o(v.As<Napi::Object>(), "request");
  GenerateRequest r;
  if (!o.Has("id")) TypeErr(env, "id must be a positive safe integer");
  r.id = IntIn(o.Get("id"), "id", 1, kMaxSafeInteger);
  if (live.count(r.id)) RangeErr(env, "id " + std::to_string(r.id) + " is already in use by a live request");
  if (!o.Has("prompt")) TypeErr(env, "prompt must be an array of token ids or an Int32Array");
  r.prompt = ParseTokens(o.Get("prompt"), "prompt", info.vocab_size, false, true);
  ParseImages(o.Has("images") ? o.Get("images") : env.Undefined(), vision, r);
  if (r.prompt.size() > static_cast<size_t>(info.ctx)) {
    RangeErr(env, "prompt has " + std::to_string(r.prompt.size()) + " tokens, more than the slot context (" +
                      std::to_string(info.ctx) + ")");
  }
  if (!o.Has("maxTokens")) TypeErr(env, "maxTokens must be a non-negative integer");
  r.max_tokens = static_cast<int32_t>(IntIn(o.Get("maxTokens"), "maxTokens", 0, 2147483647.0));
  if (o.Has("sampling")) r.sampling = ParseSampling(o.Get("sampling"), info);
  if (o.Has("stop")) {
    r.stop = StrArray(o.Get("stop"), "stop", 64);
    for (size_t i = 0; i < r.stop.size(); ++i) {
      if (r.stop[i].empty()) RangeErr(env, "stop[" + std::to_string(i) + "] is an empty string");
    }
  }
  if (o.Has("stopTokens")) r.stop_tokens = ParseTokens(o.Get("stopTokens"), "stopTokens", info.vocab_size, true);
  if (o.Has("prediction")) r.prediction = ParseTokens(o.Get("prediction"), "prediction", info.vocab_size, true);
  if (o.Has("renderTokens")) r.render_tokens = ParseTokens(o.Get("renderTokens"), "renderTokens", info.vocab_size, true);
  if (o.Has("ignoreEos")) {
    const Napi::Value b = o.Get("ignoreEos");
    if (!b.IsBoolean()) TypeErr(env, "ignoreEos must be a boolean");
    r.ignore_eos = b.As<Napi::Boolean>().Value();
  }
  if (o.Has("ngram")) {
    const Napi::Value b = o.Get("ngram");
    if (!b.IsBoolean()) TypeErr(env, "ngram must be a boolean");
    r.ngram = b.As<Napi::Boolean>().Value() ? 1 : 0;
  }
  if (o.Has("cachePrompt")) {
    const Napi::Value b = o.Get("cachePrompt");
    if (!b.IsBoolean()) TypeErr(env, "cachePrompt must be a boolean");
    r.cache_prompt = b.As<Napi::Boolean>().Value();
  }
  if (o.Has("sharedPrefix")) {
    r.shared_prefix = static_cast<int32_t>(IntIn(o.Get("sharedPrefix"), "sharedPrefix", 0, static_cast<double>(r.prompt.size())));
  }
  if (o.Has("priority")) r.priority = static_cast<int32_t>(IntIn(o.Get("priority"), "priority", -1e9, 1e9));
  if (o.Has("logprobs")) r.logprobs = static_cast<int32_t>(IntIn(o.Get("logprobs"), "logprobs", -1, 100));
  if (o.Has("n")) r.n = static_cast<int32_t>(IntIn(o.Get("n"), "n", 1, info.slots));
  if (o.Has("draftMax")) r.draft_max = static_cast<int32_t>(IntIn(o.Get("draftMax"), "draftMax", -1, 256));
  if (!r.images.empty()) r.draft_max = 0;  // drafts come from token ids; an image has none
  if (o.Has("grammarTriggers")) {
    if (!o.Has("grammar")) TypeErr(env, "grammarTriggers needs a grammar");
    r.grammar_triggers = std::make_shared<const GrammarTriggers>(ParseGrammarTriggers(o.Get("grammarTriggers")));
  }
  if (o.Has("grammar")) {
    const std::string gbnf = Str(o.Get("grammar"), "grammar");
    try {
      r.grammar = std::shared_ptr<llama_sampler>(MakeGrammarSampler(vocab, gbnf, r.grammar_triggers.get()), llama_sampler_free);
    } catch (const std::exception& e) {
      RangeErr(env, std::string("grammar: ") + e.what());
    }
  }
  o.RejectUnread();
  return r;
}

GrammarTriggers ParseGrammarTriggers(const Napi::Value& v) {
  Napi::Env env = v.Env();
  if (!v.IsObject()) TypeErr(env, "grammarTriggers must be an object");
  Fields o(v.As<Napi::Object>(), "grammarTriggers");
  GrammarTriggers t;
  auto texts = [&](const char* key) {
    const std::string field = std::string("grammarTriggers.") + key;
    std::vector<std::string> out = o.Has(key) ? StrArray(o.Get(key), field, 32) : std::vector<std::string>{};
    for (size_t i = 0; i < out.size(); ++i) {
      if (out[i].empty() || out[i].size() > 256) RangeErr(env, field + "[" + std::to_string(i) + "] must be 1 to 256 bytes");
    }
    return out;
  };
  t.words = texts("words");
  t.at_start = texts("atStart");
  if (t.words.empty() && t.at_start.empty()) RangeErr(env, "grammarTriggers: give at least one of words, atStart");
  if (o.Has("thinking")) {
    const Napi::Value th = o.Get("thinking");
    if (!th.IsObject()) TypeErr(env, "grammarTriggers.thinking must be an object {open, close, inside}");
    Fields tho(th.As<Napi::Object>(), "grammarTriggers.thinking");
    t.think_open = Str(tho.Get("open"), "grammarTriggers.thinking.open");
    t.think_close = Str(tho.Get("close"), "grammarTriggers.thinking.close");
    if (t.think_open.empty() || t.think_close.empty()) RangeErr(env, "grammarTriggers.thinking: open and close must not be empty");
    const Napi::Value inside = tho.Get("inside");
    if (!inside.IsBoolean()) TypeErr(env, "grammarTriggers.thinking.inside must be a boolean");
    t.think_inside = inside.As<Napi::Boolean>().Value();
    tho.RejectUnread();
  }
  o.RejectUnread();
  return t;
}

EmbedRequest ParseEmbedRequest(const Napi::Value& v, const ModelInfo& info, int32_t batch,
                               const std::map<int64_t, uint64_t>& live) {
  Napi::Env env = v.Env();
  if (!v.IsObject()) TypeErr(env, "embed request must be an object");
  if (!info.embedding) RangeErr(env, "this model makes text, not embeddings (its GGUF declares no pooling type)");
  Fields o(v.As<Napi::Object>(), "embed request");
  EmbedRequest r;
  if (!o.Has("id")) TypeErr(env, "id must be a positive safe integer");
  r.id = IntIn(o.Get("id"), "id", 1, kMaxSafeInteger);
  if (live.count(r.id)) RangeErr(env, "id " + std::to_string(r.id) + " is already in use by a live request");
  if (!o.Has("inputs") || !o.Get("inputs").IsArray()) TypeErr(env, "inputs must be an array of token arrays");
  const Napi::Array a = o.Get("inputs").As<Napi::Array>();
  if (a.Length() == 0) RangeErr(env, "inputs is empty");
  const int32_t limit = std::min(info.ctx, batch);
  for (uint32_t i = 0; i < a.Length(); ++i) {
    const std::string f = "inputs[" + std::to_string(i) + "]";
    r.inputs.push_back(ParseTokens(a.Get(i), f.c_str(), info.vocab_size, false));
    if (static_cast<int32_t>(r.inputs.back().size()) > limit) {
      RangeErr(env, f + " has " + std::to_string(r.inputs.back().size()) + " tokens, more than one step reads (" +
                        std::to_string(limit) + ": the context per slot and the batch)");
    }
    r.tokens += static_cast<int32_t>(r.inputs.back().size());
  }
  if (o.Has("normalize")) {
    const Napi::Value b = o.Get("normalize");
    if (!b.IsBoolean()) TypeErr(env, "normalize must be a boolean");
    r.normalize = b.As<Napi::Boolean>().Value();
  }
  o.RejectUnread();
  return r;
}

GrammarSpec ParseGrammarSpec(const Napi::Value& v) {
  Napi::Env env = v.Env();
  if (!v.IsObject()) TypeErr(env, "grammar spec must be an object");
  Fields o(v.As<Napi::Object>(), "grammar spec");
  GrammarSpec spec;
  if (!o.Has("schemas") || !o.Get("schemas").IsObject() || o.Get("schemas").IsArray()) {
    TypeErr(env, "schemas must be an object of rule name -> JSON schema text");
  }
  const Napi::Object schemas = o.Get("schemas").As<Napi::Object>();
  const Napi::Array names = schemas.GetPropertyNames();
  for (uint32_t i = 0; i < names.Length(); ++i) {
    const std::string name = names.Get(i).As<Napi::String>().Utf8Value();
    if (name.empty() || name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-") != std::string::npos) {
      RangeErr(env, "schemas: rule name '" + name + "' must be letters, digits and '-'");
    }
    spec.schemas.emplace_back(name, Str(schemas.Get(name), "schemas." + name));
  }
  if (spec.schemas.empty()) RangeErr(env, "schemas is empty");
  if (o.Has("root")) spec.root = Str(o.Get("root"), "root");
  o.RejectUnread({"gbnf"});  // engine_wrap.cpp's buildGrammar reads it
  return spec;
}

}  // namespace strata
