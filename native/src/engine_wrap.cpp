// The JS Engine class (addon.d.ts): a thin ObjectWrap over strata::Engine. JS thread only,
// except the sink, which the engine thread calls to hand a step's message to the TSFN.
#include "engine_wrap.h"

#include <chrono>
#include <map>
#include <memory>
#include <set>

#include "engine.h"
#include "engine_error.h"
#include "engine_js.h"
#include "grammar.h"
#include "js_args.h"
#include "model_loader.h"
#include "prompt_tokenizer.h"

namespace strata {

namespace {

class EngineWrap;
void DeliverStep(Napi::Env env, Napi::Function cb, EngineWrap* self, StepMessage* msg);
using EventsFn = Napi::TypedThreadSafeFunction<EngineWrap, StepMessage, DeliverStep>;

// An Error carrying the engine's code as error.code (EngineErrorCode in addon.d.ts).
Napi::Error CodedErrorObject(Napi::Env env, const std::string& message, ErrorCode code) {
  Napi::Error e = Napi::Error::New(env, message);
  e.Set("code", Napi::String::New(env, ErrorCodeName(code)));
  return e;
}
Napi::Value CodedError(Napi::Env env, const std::string& message, ErrorCode code) {
  return CodedErrorObject(env, message, code).Value();
}

// What Engine.load hands to the constructor (through a Napi::External).
struct LoadResult {
  LoadedModel loaded;
  EngineConfig cfg;
  ~LoadResult() { FreeLoadedModel(loaded); }
};

class EngineWrap : public Napi::ObjectWrap<EngineWrap> {
 public:
  static Napi::Function Define(Napi::Env env) {
    return DefineClass(env, "Engine", {
        StaticMethod<&EngineWrap::Load>("load"),
        InstanceMethod<&EngineWrap::Submit>("submit"),
        InstanceMethod<&EngineWrap::Embed>("embed"),
        InstanceMethod<&EngineWrap::BuildGrammar>("buildGrammar"),
        InstanceMethod<&EngineWrap::Cancel>("cancel"),
        InstanceMethod<&EngineWrap::Tokenize>("tokenize"),
        InstanceMethod<&EngineWrap::TokenizeSegments>("tokenizeSegments"),
        InstanceMethod<&EngineWrap::PrepareImage>("prepareImage"),
        InstanceMethod<&EngineWrap::Detokenize>("detokenize"),
        InstanceMethod<&EngineWrap::SaveSession>("saveSession"),
        InstanceMethod<&EngineWrap::LoadSession>("loadSession"),
        InstanceMethod<&EngineWrap::Snapshot>("snapshot"),
        InstanceMethod<&EngineWrap::Traces>("traces"),
        InstanceMethod<&EngineWrap::Devices>("devices"),
        InstanceMethod<&EngineWrap::Close>("close"),
    });
  }

  explicit EngineWrap(const Napi::CallbackInfo& info) : Napi::ObjectWrap<EngineWrap>(info) {
    Napi::Env env = info.Env();
    if (info.Length() < 2 || !info[0].IsExternal() || !info[1].IsFunction()) {
      throw Napi::TypeError::New(env, "Engine cannot be constructed directly; use Engine.load(options)");
    }
    LoadResult* r = info[0].As<Napi::External<LoadResult>>().Data();
    if (!r->loaded.model) throw Napi::Error::New(env, "this load result was already used");
    info_ = r->loaded.info;
    devices_ = r->loaded.devices;
    vocab_ = llama_model_get_vocab(r->loaded.model);
    prompt_tokenizer_ = std::make_unique<PromptTokenizer>(vocab_);
    tsfn_ = EventsFn::New(env, info[1].As<Napi::Function>(), "strata:EngineEvents", 0, 1, this);
    if (info.Length() > 2 && info[2].IsFunction()) on_fatal_.Reset(info[2].As<Napi::Function>(), 1);
    EventsFn tsfn = tsfn_;
    Engine::Sink sink = [tsfn](std::unique_ptr<StepMessage> m) mutable {
      m->handed_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
      StepMessage* raw = m.release();
      if (tsfn.NonBlockingCall(raw) != napi_ok) delete raw;  // JS side is gone
    };
    std::unique_ptr<DraftModel> draft;
    if (r->loaded.draft_model) {
      draft = std::make_unique<DraftModel>(r->loaded.draft_model, r->loaded.draft_ctx, r->cfg.spec.draft_p_min);
      r->loaded.draft_model = nullptr;
      r->loaded.draft_ctx = nullptr;
    }
    if (r->loaded.head) r->cfg.spec.ngram = false;  // the head drafts in place of n-grams
    batch_ = r->cfg.batch;
    engine_ = std::make_unique<Engine>(r->loaded.model, r->loaded.ctx, r->loaded.pools, std::move(draft), r->cfg,
                                       r->loaded.info, std::move(sink));
    vision_ = std::move(r->loaded.vision);  // before the engine is freed: the engine frees the model last
    engine_->SetVision(vision_);
    engine_->SetHead(std::move(r->loaded.head));
    r->loaded.model = nullptr;  // the engine owns them now
    r->loaded.ctx = nullptr;
    r->loaded.pools = CpuThreadpools{};
    info.This().As<Napi::Object>().DefineProperty(
        Napi::PropertyDescriptor::Value("info", InfoToJs(env, info_), napi_enumerable));
    engine_->Start();
    Ref();  // alive until close(), whatever JS holds
    env_ = env;
    napi_add_env_cleanup_hook(env, &EngineWrap::OnEnvTeardown, this);
    UpdateRef(env);
  }

  ~EngineWrap() override { Teardown(); }

  // Called on the JS thread with one engine step's message.
  void Deliver(Napi::Env env, Napi::Function cb, StepMessage& msg) {
    Napi::HandleScope scope(env);
    for (const auto& e : msg.events) {
      if (e.type == EventType::Done) live_.erase(e.id);
    }
    std::unique_ptr<Napi::Error> thrown;
    if (!msg.events.empty()) {
      try {
        cb.Call({EventsToJs(env, msg.events), Napi::Number::New(env, msg.handed_ms)});
      } catch (const Napi::Error& e) {
        thrown = std::make_unique<Napi::Error>(e);
      }
    }
    for (auto& r : msg.results) Settle(env, r);
    if (msg.closed && !msg.fatal.empty()) FailLeftovers(env, cb, msg);
    if (msg.closed) FinishClose(env);
    UpdateRef(env);
    if (thrown) thrown->ThrowAsJavaScriptException();  // the onEvents handler's own error
  }

 private:
  static Napi::Value Load(const Napi::CallbackInfo& info);

  void Submit(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    CheckOpen(env);
    GenerateRequest req = ParseRequest(info[0], info_, vocab_, live_, vision_.get());
    req.key = next_key_++;
    live_.emplace(req.id, req.key);
    engine_->Submit(std::move(req));
    UpdateRef(env);
  }

  void Embed(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    CheckOpen(env);
    EmbedRequest req = ParseEmbedRequest(info[0], info_, batch_, live_);
    req.key = next_key_++;
    live_.emplace(req.id, req.key);
    engine_->SubmitEmbed(std::move(req));
    UpdateRef(env);
  }

  // buildGrammar({schemas, root} | {gbnf}): GBNF that parses for this vocabulary, or an Error
  // naming what the converter or the parser could not handle.
  Napi::Value BuildGrammar(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    CheckOpen(env);
    if (!info[0].IsObject()) throw Napi::TypeError::New(env, "buildGrammar needs {schemas, root} or {gbnf}");
    const Napi::Object o = info[0].As<Napi::Object>();
    std::string gbnf;
    try {
      if (o.Has("gbnf") && !o.Get("gbnf").IsUndefined()) {
        if (!o.Get("gbnf").IsString()) throw Napi::TypeError::New(env, "gbnf must be a string");
        gbnf = o.Get("gbnf").As<Napi::String>().Utf8Value();
      } else {
        gbnf = SchemaToGrammar(ParseGrammarSpec(o));
      }
      llama_sampler_free(MakeGrammarSampler(vocab_, gbnf));
    } catch (const std::invalid_argument& e) {
      throw Napi::Error::New(env, e.what());
    }
    return Napi::String::New(env, gbnf);
  }

  void Cancel(const Napi::CallbackInfo& info) {
    if (!info[0].IsNumber()) throw Napi::TypeError::New(info.Env(), "id must be a number");
    if (!engine_ || closing_) return;
    const double id = info[0].As<Napi::Number>().DoubleValue();
    const auto key = static_cast<int64_t>(id);
    auto it = live_.find(key);
    if (static_cast<double>(key) == id && it != live_.end()) engine_->Cancel(it->second);
  }

  Napi::Value Tokenize(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    CheckOpen(env);
    if (!info[0].IsString()) throw Napi::TypeError::New(env, "text must be a string");
    const std::string text = info[0].As<Napi::String>().Utf8Value();
    const bool add_special = js::OptionalBool(info, 1, "addSpecial", true);
    const bool parse_special = js::OptionalBool(info, 2, "parseSpecial", false);
    std::vector<llama_token> out(text.size() + 8);
    int32_t n = llama_tokenize(vocab_, text.data(), static_cast<int32_t>(text.size()), out.data(),
                               static_cast<int32_t>(out.size()), add_special, parse_special);
    if (n < 0) {
      if (n == INT32_MIN) throw Napi::RangeError::New(env, "text is too long to tokenize");
      out.resize(static_cast<size_t>(-n));
      n = llama_tokenize(vocab_, text.data(), static_cast<int32_t>(text.size()), out.data(),
                         static_cast<int32_t>(out.size()), add_special, parse_special);
    }
    out.resize(static_cast<size_t>(std::max(n, 0)));
    return TokensToJs(env, out);
  }

  // segments: [{text, plain?}]; see PromptTokenizer::Tokenize.
  Napi::Value TokenizeSegments(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    CheckOpen(env);
    if (!info[0].IsArray()) throw Napi::TypeError::New(env, "segments must be an array of {text, plain}");
    const Napi::Array arr = info[0].As<Napi::Array>();
    std::vector<PromptSegment> segments(arr.Length());
    for (uint32_t i = 0; i < arr.Length(); ++i) {
      const Napi::Value v = arr.Get(i);
      const std::string at = "segments[" + std::to_string(i) + "]";
      if (!v.IsObject()) throw Napi::TypeError::New(env, at + " must be an object {text, plain}");
      const Napi::Object o = v.As<Napi::Object>();
      const Napi::Value text = o.Get("text");
      const Napi::Value plain = o.Get("plain");
      if (!text.IsString()) throw Napi::TypeError::New(env, at + ".text must be a string");
      if (!plain.IsUndefined() && !plain.IsBoolean()) throw Napi::TypeError::New(env, at + ".plain must be a boolean");
      segments[i] = {text.As<Napi::String>().Utf8Value(), plain.IsBoolean() && plain.As<Napi::Boolean>().Value()};
    }
    const bool add_special = js::OptionalBool(info, 1, "addSpecial", true);
    try {
      return TokensToJs(env, prompt_tokenizer_->Tokenize(segments, add_special));
    } catch (const std::length_error& e) {
      throw Napi::RangeError::New(env, e.what());
    }
  }

  // prepareImage(data: Uint8Array, maxPixels?: number): Promise<{id, tokens, at, n, width, height}>.
  Napi::Value PrepareImage(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    CheckOpen(env);
    if (!vision_) throw Napi::RangeError::New(env, "this model was loaded without a projector (mmproj): it reads text only");
    if (!info[0].IsTypedArray() || info[0].As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array) {
      throw Napi::TypeError::New(env, "data must be a Uint8Array of the image file's bytes");
    }
    double max_pixels = 0;
    if (info.Length() > 1 && !info[1].IsUndefined()) {
      if (!info[1].IsNumber() || info[1].As<Napi::Number>().DoubleValue() < 0) throw Napi::TypeError::New(env, "maxPixels must be a non-negative number");
      max_pixels = info[1].As<Napi::Number>().DoubleValue();
    }
    return PrepareImageAsync(env, vision_, info[0].As<Napi::Uint8Array>(), static_cast<uint64_t>(max_pixels));
  }

  Napi::Value Detokenize(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    CheckOpen(env);
    const std::vector<llama_token> tokens = ParseTokens(info[0], "tokens", info_.vocab_size, true);
    const bool remove_special = js::OptionalBool(info, 1, "removeSpecial", false);
    const bool unparse_special = js::OptionalBool(info, 2, "unparseSpecial", false);
    std::string text(tokens.size() * 8 + 16, '\0');
    int32_t n = llama_detokenize(vocab_, tokens.data(), static_cast<int32_t>(tokens.size()), text.data(),
                                 static_cast<int32_t>(text.size()), remove_special, unparse_special);
    if (n < 0) {
      text.resize(static_cast<size_t>(-n));
      n = llama_detokenize(vocab_, tokens.data(), static_cast<int32_t>(tokens.size()), text.data(),
                           static_cast<int32_t>(text.size()), remove_special, unparse_special);
    }
    text.resize(static_cast<size_t>(std::max(n, 0)));
    return Napi::String::New(env, text);
  }

  Napi::Value SaveSession(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    auto d = Napi::Promise::Deferred::New(env);
    try {
      CheckOpen(env);
      const std::string path = js::NonEmptyStr(info[0], "path");
      std::vector<llama_token> tokens = ParseTokens(info[1], "tokens", info_.vocab_size, false);
      const std::string identity = js::Str(info[2], "identity");
      std::string meta;
      if (!info[3].IsUndefined()) {
        if (!info[3].IsString()) throw Napi::TypeError::New(env, "meta must be a string");
        meta = info[3].As<Napi::String>().Utf8Value();
      }
      const uint64_t ticket = next_ticket_++;
      pending_.emplace(ticket, Pending{d, false});
      engine_->SaveSession(ticket, path, std::move(tokens), identity, std::move(meta));
      UpdateRef(env);
    } catch (const Napi::Error& e) {
      d.Reject(e.Value());
    }
    return d.Promise();
  }

  Napi::Value LoadSession(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    auto d = Napi::Promise::Deferred::New(env);
    try {
      CheckOpen(env);
      const std::string path = js::NonEmptyStr(info[0], "path");
      const std::string identity = js::Str(info[1], "identity");
      const uint64_t ticket = next_ticket_++;
      pending_.emplace(ticket, Pending{d, true});
      engine_->LoadSession(ticket, path, identity);
      UpdateRef(env);
    } catch (const Napi::Error& e) {
      d.Reject(e.Value());
    }
    return d.Promise();
  }

  Napi::Value Snapshot(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (!engine_) throw CodedErrorObject(env, "engine is closed", ErrorCode::EngineClosed);
    return SnapshotToJs(env, engine_->Snapshot());
  }

  Napi::Value Traces(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (!engine_) throw CodedErrorObject(env, "engine is closed", ErrorCode::EngineClosed);
    return TracesToJs(env, engine_->DrainStepTraces(), engine_->DrainRequestTraces());
  }

  Napi::Value Devices(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (!engine_) throw CodedErrorObject(env, "engine is closed", ErrorCode::EngineClosed);
    Napi::Array out = Napi::Array::New(env, devices_.size());
    for (size_t i = 0; i < devices_.size(); ++i) out.Set(static_cast<uint32_t>(i), DeviceToJs(env, DescribeDevice(devices_[i])));
    return out;
  }

  Napi::Value Close(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    auto d = Napi::Promise::Deferred::New(env);
    if (!engine_) {
      d.Resolve(env.Undefined());
      return d.Promise();
    }
    close_waiters_.push_back(d);
    if (!closing_) {
      closing_ = true;
      engine_->RequestClose();
    }
    UpdateRef(env);
    return d.Promise();
  }

  struct Pending {
    Napi::Promise::Deferred deferred;
    bool is_load;
  };

  void Settle(Napi::Env env, CommandResult& r) {
    auto it = pending_.find(r.ticket);
    if (it == pending_.end()) return;
    Pending p = it->second;
    pending_.erase(it);
    if (!r.error.empty()) {
      p.deferred.Reject(CodedError(env, r.error, r.code));
      return;
    }
    Napi::Object o = Napi::Object::New(env);
    o.Set("tokens", r.session.tokens);
    o.Set("bytes", static_cast<double>(r.session.bytes));
    o.Set("ms", r.session.ms);
    const SessionPhases& ph = r.session.phases;
    Napi::Object phases = Napi::Object::New(env);
    phases.Set("stateMs", ph.state_ms);
    phases.Set("readMs", ph.read_ms);
    phases.Set("hashMs", ph.hash_ms);
    phases.Set("writeMs", ph.write_ms);
    phases.Set("syncMs", ph.sync_ms);
    o.Set("phases", phases);
    if (p.is_load) {
      o.Set("tokenIds", TokensToJs(env, r.token_ids));
      o.Set("meta", Napi::String::New(env, r.session.meta));
      o.Set("into", r.session.into == SessionInto::Slot ? "slot" : "park");
    }
    p.deferred.Resolve(o);
  }

  // The engine thread ended on an error of its own: requests it had not seen yet (submitted
  // after it stopped reading) end with that error too, then onFatal says why.
  void FailLeftovers(Napi::Env env, Napi::Function cb, const StepMessage& msg) {
    std::vector<EngineEvent> done;
    for (const auto& kv : live_) {
      EngineEvent e;
      e.type = EventType::Done;
      e.id = kv.first;
      e.finish = FinishReason::Error;
      e.error = msg.fatal;
      done.push_back(std::move(e));
    }
    live_.clear();
    if (!done.empty()) {
      try { cb.Call({EventsToJs(env, done), Napi::Number::New(env, msg.handed_ms)}); } catch (const Napi::Error&) { /* reported by the caller's handler */ }
    }
    if (!on_fatal_.IsEmpty()) {
      try { on_fatal_.Call({Napi::String::New(env, msg.fatal)}); } catch (const Napi::Error&) { /* the handler's own error */ }
    }
  }

  void FinishClose(Napi::Env env) {
    Teardown();
    for (auto& kv : pending_) kv.second.deferred.Reject(CodedError(env, "engine is closed", ErrorCode::EngineClosed));
    pending_.clear();
    for (auto& d : close_waiters_) d.Resolve(env.Undefined());
    close_waiters_.clear();
    tsfn_.Release();
    released_ = true;
    Unref();
  }

  // Stops the thread and frees the model; safe to call more than once.
  void Teardown() {
    if (engine_) {
      engine_->StopSilently();
      if (vision_) vision_->Close();  // a prepareImage worker may still hold it: freed here, before the model
      vision_.reset();  // the engine's reference goes with it
      engine_.reset();
    }
    if (env_) {
      napi_remove_env_cleanup_hook(env_, &EngineWrap::OnEnvTeardown, this);
      env_ = nullptr;
    }
  }

  // Process exit without close(): stop the thread before the runtime goes away.
  static void OnEnvTeardown(void* arg) {
    auto* self = static_cast<EngineWrap*>(arg);
    if (self->engine_) {
      self->engine_->StopSilently();
      if (self->vision_) self->vision_->Close();
      self->vision_.reset();
      self->engine_.reset();
    }
    self->env_ = nullptr;
  }

  // The TSFN keeps Node alive only while something waits on the engine.
  void UpdateRef(Napi::Env env) {
    if (released_) return;
    const bool want = !live_.empty() || !pending_.empty() || closing_;
    if (want == refd_) return;
    if (want) tsfn_.Ref(env);
    else tsfn_.Unref(env);
    refd_ = want;
  }

  void CheckOpen(Napi::Env env) const {
    if (!engine_ || closing_) throw CodedErrorObject(env, "engine is closed", ErrorCode::EngineClosed);
  }

  std::unique_ptr<Engine> engine_;
  ModelInfo info_;
  std::vector<ggml_backend_dev_t> devices_;
  const llama_vocab* vocab_ = nullptr;
  std::unique_ptr<PromptTokenizer> prompt_tokenizer_;
  std::shared_ptr<Vision> vision_;  // the projector, shared with the engine thread; null without one
  int32_t batch_ = 0;
  EventsFn tsfn_;
  napi_env env_ = nullptr;
  std::map<int64_t, uint64_t> live_;  // caller id -> request key, until its 'done' is delivered
  Napi::FunctionReference on_fatal_;  // EngineOptions.onFatal, when given
  uint64_t next_key_ = 1;
  std::map<uint64_t, Pending> pending_;
  uint64_t next_ticket_ = 1;
  std::vector<Napi::Promise::Deferred> close_waiters_;
  bool closing_ = false;
  bool refd_ = true;  // a new TSFN is referenced
  bool released_ = false;
};

void DeliverStep(Napi::Env env, Napi::Function cb, EngineWrap* self, StepMessage* msg) {
  std::unique_ptr<StepMessage> owned(msg);
  if (env == nullptr || self == nullptr) return;  // the TSFN is being torn down
  self->Deliver(env, cb, *owned);
}

// Loads on a worker thread; the engine object is created back on the JS thread.
class EngineLoadWorker : public Napi::AsyncWorker {
 public:
  EngineLoadWorker(Napi::Env env, EngineConfig cfg, Napi::Function ctor, Napi::Function on_events, Napi::Value on_fatal)
      : Napi::AsyncWorker(env, "strata:EngineLoad"), deferred_(Napi::Promise::Deferred::New(env)),
        result_(std::make_unique<LoadResult>()) {
    result_->cfg = std::move(cfg);
    ctor_.Reset(ctor, 1);
    on_events_.Reset(on_events, 1);
    if (on_fatal.IsFunction()) on_fatal_.Reset(on_fatal.As<Napi::Function>(), 1);
  }
  Napi::Promise Promise() const { return deferred_.Promise(); }

  void Execute() override {
    try {
      result_->loaded = LoadModel(result_->cfg);
    } catch (const std::exception& e) {
      SetError(e.what());
    }
  }

  void OnOK() override {
    Napi::Env env = Env();
    Napi::HandleScope scope(env);
    try {
      Napi::Object engine = ctor_.Value().New({Napi::External<LoadResult>::New(env, result_.get()), on_events_.Value(),
                                               on_fatal_.IsEmpty() ? env.Undefined() : on_fatal_.Value()});
      deferred_.Resolve(engine);
    } catch (const Napi::Error& e) {
      deferred_.Reject(e.Value());
    }
  }

  void OnError(const Napi::Error& e) override { deferred_.Reject(e.Value()); }

 private:
  Napi::Promise::Deferred deferred_;
  std::unique_ptr<LoadResult> result_;  // frees the model unless the engine took it
  Napi::FunctionReference ctor_;
  Napi::FunctionReference on_events_;
  Napi::FunctionReference on_fatal_;
};

Napi::Value EngineWrap::Load(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return js::RejectOnThrow(env, [&]() -> Napi::Value {
    if (!info[0].IsObject()) throw Napi::TypeError::New(env, "Engine.load needs an options object");
    const Napi::Object opts = info[0].As<Napi::Object>();
    EngineConfig cfg = ParseEngineOptions(opts);
    const Napi::Value on_events = opts.Get("onEvents");
    if (!on_events.IsFunction()) throw Napi::TypeError::New(env, "onEvents must be a function");
    const Napi::Value on_fatal = opts.Get("onFatal");
    if (!on_fatal.IsUndefined() && !on_fatal.IsFunction()) throw Napi::TypeError::New(env, "onFatal must be a function");
    return js::Queued(new EngineLoadWorker(env, std::move(cfg), info.This().As<Napi::Function>(), on_events.As<Napi::Function>(), on_fatal));
  });
}

}  // namespace

void InitEngine(Napi::Env env, Napi::Object exports) {
  exports.Set("Engine", EngineWrap::Define(env));
}

}  // namespace strata
