// fitModel(options, {asked}): what loading with `fit: true` would decide now, without loading, or
// (asked) what the asked options need as they are (addon.d.ts).
// The measurement runs on a worker thread (it loads the model's metadata a few times, without its
// weights); the report comes back as a Promise.
#include <memory>

#include "engine_js.h"
#include "fit_js.h"
#include "js_args.h"
#include "model_loader.h"

namespace strata {

namespace {

class FitWorker : public Napi::AsyncWorker {
 public:
  FitWorker(Napi::Env env, EngineConfig cfg, bool search)
      : Napi::AsyncWorker(env, "strata:FitModel"), deferred_(Napi::Promise::Deferred::New(env)), cfg_(std::move(cfg)),
        search_(search) {}
  Napi::Promise Promise() const { return deferred_.Promise(); }

  void Execute() override {
    try {
      report_ = FitModel(cfg_, search_);
    } catch (const std::exception& e) {
      SetError(e.what());
    }
  }
  void OnOK() override { deferred_.Resolve(FitReportToJs(Env(), report_)); }
  void OnError(const Napi::Error& e) override { deferred_.Reject(e.Value()); }

 private:
  Napi::Promise::Deferred deferred_;
  EngineConfig cfg_;
  bool search_;
  FitReport report_;
};

Napi::Value FitModelJs(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return js::RejectOnThrow(env, [&]() -> Napi::Value {
    if (!info[0].IsObject()) throw Napi::TypeError::New(env, "fitModel needs an options object");
    EngineConfig cfg = ParseEngineOptions(info[0].As<Napi::Object>());
    bool search = true;
    if (info.Length() > 1 && !info[1].IsUndefined()) {
      if (!info[1].IsObject()) throw Napi::TypeError::New(env, "fitModel's second argument must be {asked?: boolean}");
      const Napi::Value asked = info[1].As<Napi::Object>().Get("asked");
      if (!asked.IsUndefined() && !asked.IsBoolean()) throw Napi::TypeError::New(env, "asked must be a boolean");
      search = !(asked.IsBoolean() && asked.As<Napi::Boolean>().Value());
    }
    return js::Queued(new FitWorker(env, std::move(cfg), search));
  });
}

}  // namespace

void InitFit(Napi::Env env, Napi::Object exports) {
  exports.Set("fitModel", Napi::Function::New(env, FitModelJs, "fitModel"));
}

}  // namespace strata
