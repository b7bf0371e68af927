// Native engine values -> JS (the other half of engine_js.h; engine_js.cpp parses JS input):
// step events, model info, snapshots, traces. JS thread only.
#include <cstring>
#include <string>

#include "engine_js.h"
#include "tools.h"

namespace strata {

Napi::Int32Array TokensToJs(Napi::Env env, const std::vector<llama_token>& tokens) {
  Napi::Int32Array a = Napi::Int32Array::New(env, tokens.size());
  if (!tokens.empty()) std::memcpy(a.Data(), tokens.data(), tokens.size() * sizeof(llama_token));
  return a;
}

// Token bytes as numbers: a piece may be part of a UTF-8 character, which a JS string cannot hold.
static Napi::Array BytesToJs(Napi::Env env, const std::string& piece) {
  Napi::Array a = Napi::Array::New(env, piece.size());
  for (size_t i = 0; i < piece.size(); ++i) a.Set(static_cast<uint32_t>(i), static_cast<uint8_t>(piece[i]));
  return a;
}

static Napi::Array LogprobsToJs(Napi::Env env, const std::vector<TokenLogprob>& lps) {
  Napi::Array out = Napi::Array::New(env, lps.size());
  for (size_t i = 0; i < lps.size(); ++i) {
    Napi::Object o = Napi::Object::New(env);
    o.Set("logprob", lps[i].logprob);
    o.Set("bytes", BytesToJs(env, lps[i].piece));
    Napi::Array top = Napi::Array::New(env, lps[i].top.size());
    for (size_t k = 0; k < lps[i].top.size(); ++k) {
      Napi::Object t = Napi::Object::New(env);
      t.Set("id", lps[i].top[k].id);
      t.Set("logprob", lps[i].top[k].logprob);
      t.Set("bytes", BytesToJs(env, lps[i].top[k].piece));
      top.Set(static_cast<uint32_t>(k), t);
    }
    o.Set("top", top);
    out.Set(static_cast<uint32_t>(i), o);
  }
  return out;
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
        if (e.choice > 0) o.Set("choice", e.choice);
        if (!e.logprobs.empty()) o.Set("logprobs", LogprobsToJs(env, e.logprobs));
        break;
      }
      case EventType::Embedding: {
        o.Set("type", "embedding");
        o.Set("index", e.index);
        Napi::Float32Array vec = Napi::Float32Array::New(env, e.vector.size());
        if (!e.vector.empty()) std::memcpy(vec.Data(), e.vector.data(), e.vector.size() * sizeof(float));
        o.Set("vector", vec);
        break;
      }
      case EventType::Done:
        o.Set("type", "done");
        o.Set("finish", FinishReasonName(e.finish));
        if (!e.error.empty()) o.Set("error", Napi::String::New(env, e.error));
        if (!e.error_code.empty()) o.Set("errorCode", Napi::String::New(env, e.error_code));
        if (!e.stop_string.empty()) o.Set("stopString", Napi::String::New(env, e.stop_string));
        o.Set("promptTokens", e.stats.prompt_tokens);
        o.Set("reused", e.stats.reused);
        o.Set("promptMs", e.stats.prompt_ms);
        o.Set("decodeMs", e.stats.decode_ms);
        o.Set("generated", e.stats.generated);
        o.Set("text", Napi::String::New(env, e.text));
        o.Set("drafted", e.stats.drafted);
        o.Set("accepted", e.stats.accepted);
        o.Set("predictionAccepted", e.stats.predicted_accepted);
        o.Set("predictionRejected", e.stats.predicted - e.stats.predicted_accepted);
        if (!e.choices.empty()) {
          Napi::Array choices = Napi::Array::New(env, e.choices.size());
          for (size_t k = 0; k < e.choices.size(); ++k) {
            Napi::Object c = Napi::Object::New(env);
            c.Set("finish", FinishReasonName(e.choices[k].finish));
            c.Set("generated", e.choices[k].generated);
            c.Set("text", Napi::String::New(env, e.choices[k].text));
            choices.Set(static_cast<uint32_t>(k), c);
          }
          o.Set("choices", choices);
        }
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

static Napi::Object FitUseToJs(Napi::Env env, const FitDeviceUse& d) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("device", d.device);
  o.Set("layers", d.layers);
  o.Set("free", static_cast<double>(d.free));
  o.Set("total", static_cast<double>(d.total));
  o.Set("model", static_cast<double>(d.model));
  o.Set("context", static_cast<double>(d.context));
  o.Set("compute", static_cast<double>(d.compute));
  return o;
}

Napi::Object FitReportToJs(Napi::Env env, const FitReport& r) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("status", r.status);
  o.Set("gpuLayers", r.gpu_layers);
  o.Set("nLayer", r.n_layer);
  o.Set("ctx", r.ctx);
  o.Set("pool", r.pool);
  o.Set("unified", r.unified);
  o.Set("slots", r.slots);
  o.Set("kvType", r.kv_type);
  o.Set("marginBytes", static_cast<double>(r.margin));
  Napi::Array devices = Napi::Array::New(env, r.devices.size());
  for (size_t i = 0; i < r.devices.size(); ++i) devices.Set(static_cast<uint32_t>(i), FitUseToJs(env, r.devices[i]));
  o.Set("devices", devices);
  o.Set("host", FitUseToJs(env, r.host));
  Napi::Array changes = Napi::Array::New(env, r.changes.size());
  for (size_t i = 0; i < r.changes.size(); ++i) changes.Set(static_cast<uint32_t>(i), r.changes[i]);
  o.Set("changes", changes);
  o.Set("reason", r.reason.empty() ? env.Null() : Napi::String::New(env, r.reason));
  Napi::Array suggestions = Napi::Array::New(env, r.suggestions.size());
  for (size_t i = 0; i < r.suggestions.size(); ++i) {
    const FitSuggestion& s = r.suggestions[i];
    Napi::Object so = Napi::Object::New(env);
    so.Set("change", s.change);
    so.Set("slots", s.slots);
    so.Set("ctx", s.ctx);
    so.Set("kvType", s.kv_type);
    so.Set("gpuLayers", s.gpu_layers);
    suggestions.Set(static_cast<uint32_t>(i), so);
  }
  o.Set("suggestions", suggestions);
  Napi::Array log = Napi::Array::New(env, r.log.size());
  for (size_t i = 0; i < r.log.size(); ++i) log.Set(static_cast<uint32_t>(i), r.log[i]);
  o.Set("log", log);
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
  o.Set("ctxPool", m.pool);
  o.Set("kvUnified", m.kv_unified);
  o.Set("recurrent", m.recurrent);
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
  o.Set("mmproj", m.mmproj.empty() ? env.Null() : Napi::String::New(env, m.mmproj));
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
  o.Set("admitWindowMs", m.admit_window_ms);
  Napi::Object cpu = Napi::Object::New(env);
  cpu.Set("variant", m.backends.cpu_variant.empty() ? env.Null() : Napi::String::New(env, m.backends.cpu_variant));
  cpu.Set("repack", m.cpu_repack);
  cpu.Set("deterministic", m.deterministic);
  o.Set("cpu", cpu);
  o.Set("opOffload", m.op_offload);
  Napi::Array buffers = Napi::Array::New(env, m.buffers.size());
  for (size_t i = 0; i < m.buffers.size(); ++i) {
    Napi::Object b = Napi::Object::New(env);
    b.Set("kind", m.buffers[i].kind);
    b.Set("buffer", m.buffers[i].buffer);
    b.Set("mib", m.buffers[i].mib);
    buffers.Set(static_cast<uint32_t>(i), b);
  }
  o.Set("buffers", buffers);
  o.Set("backends", BackendReportToJs(env, m.backends));
  if (m.embedding) {
    Napi::Object e = Napi::Object::New(env);
    e.Set("pooling", m.pooling);
    e.Set("dimensions", m.n_embd);
    o.Set("embedding", e);
  } else {
    o.Set("embedding", env.Null());
  }
  if (m.embedding && m.pooling == "rank") {
    auto tokens = [&](const std::vector<llama_token>& v) {
      Napi::Array a = Napi::Array::New(env, v.size());
      for (size_t i = 0; i < v.size(); ++i) a.Set(static_cast<uint32_t>(i), v[i]);
      return a;
    };
    Napi::Object r = Napi::Object::New(env);
    r.Set("template", m.rerank_template.empty() ? env.Null() : Napi::String::New(env, m.rerank_template));
    r.Set("prefix", tokens(m.rerank_prefix));
    r.Set("separator", tokens(m.rerank_separator));
    r.Set("suffix", tokens(m.rerank_suffix));
    o.Set("rerank", r);
  } else {
    o.Set("rerank", env.Null());
  }
  Napi::Object spec = Napi::Object::New(env);
  spec.Set("ngram", m.spec_ngram);
  spec.Set("ngramKind", m.ngram_kind.empty() ? env.Null() : Napi::String::New(env, m.ngram_kind));
  spec.Set("mtp", m.spec_mtp);
  spec.Set("draftModel", m.draft_model.empty() ? env.Null() : Napi::String::New(env, m.draft_model));
  spec.Set("draftKind", m.draft_kind.empty() ? env.Null() : Napi::String::New(env, m.draft_kind));
  spec.Set("draftMax", m.draft_max);
  o.Set("speculative", spec);
  o.Set("fit", m.fit.on ? Napi::Value(FitReportToJs(env, m.fit)) : env.Null());
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
  totals.Set("drafted", static_cast<double>(s.drafted));
  totals.Set("accepted", static_cast<double>(s.accepted));
  totals.Set("embedded", static_cast<double>(s.embedded));
  Napi::Array positions = Napi::Array::New(env, s.drafted_at.size());
  for (size_t i = 0; i < s.drafted_at.size(); ++i) {
    Napi::Object p = Napi::Object::New(env);
    p.Set("drafted", static_cast<double>(s.drafted_at[i]));
    p.Set("accepted", static_cast<double>(i < s.accepted_at.size() ? s.accepted_at[i] : 0));
    positions.Set(static_cast<uint32_t>(i), p);
  }
  totals.Set("draftPositions", positions);
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
    so.Set("draftTokens", t.draft_tokens);
    so.Set("acceptedTokens", t.accepted_tokens);
    so.Set("draftMs", t.draft_ms);
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
    ro.Set("drafted", t.drafted);
    ro.Set("accepted", t.accepted);
    ro.Set("choices", t.choices);
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
