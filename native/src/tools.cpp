// Process-wide tools of the addon: listDevices, rpcServe, makeTestModel, makeTestProjector, systemInfo, cpuVariants,
// loadBackends, testModelVersion (types in native/lib/addon.d.ts). JS thread only; every argument checked.
#include "tools.h"

#ifdef _WIN32
#include <winsock2.h>
#include <ws2tcpip.h>
#else
#include <arpa/inet.h>
#endif

#include <cmath>
#include <cstdint>
#include <exception>
#include <string>
#include <vector>

#include "backends.h"
#include "engine_js.h"
#include "engine_options.h"
#include "js_args.h"
#include "ggml-backend.h"
#include "llama.h"
#include "test_model.h"
#include "test_projector.h"

namespace strata {

namespace {

// Argument checks: the addon's one set (js_args.h).
using js::IntIn;
using js::Str;

std::vector<std::string> OptionalStringArray(const Napi::Value & v, const char * what) {
  if (v.IsUndefined() || v.IsNull()) return {};
  return js::StrArray(v, what, UINT32_MAX);
}

// listDevices(rpc?: string[]): DeviceInfo[]
Napi::Value ListDevices(const Napi::CallbackInfo & info) {
  Napi::Env env = info.Env();
  const std::vector<std::string> rpc = OptionalStringArray(info[0], "rpc");
  EnsureBackendsLoaded();
  try {
    AddRpcServers(rpc);
  } catch (const std::exception & e) {
    throw Napi::Error::New(env, e.what());
  }
  const size_t n = ggml_backend_dev_count();
  Napi::Array out = Napi::Array::New(env, n);
  for (size_t i = 0; i < n; i++) out.Set(static_cast<uint32_t>(i), DeviceToJs(env, DescribeDevice(ggml_backend_dev_get(i))));
  return out;
}

// rpcServe(host, port, threads): blocks this thread serving ggml RPC; returns only by throwing.
Napi::Value RpcServe(const Napi::CallbackInfo & info) {
  Napi::Env env = info.Env();
  const std::string host = Str(info[0], "host");
  in_addr addr{};
  if (inet_pton(AF_INET, host.c_str(), &addr) != 1) {
    throw Napi::TypeError::New(env, "host must be an IPv4 address such as 127.0.0.1, got '" + host + "'");
  }
  const int64_t port = IntIn(info[1], "port", 1, 65535);
  const int64_t threads = IntIn(info[2], "threads", 1, 1024);
  EnsureBackendsLoaded();
  // Like llama.cpp's rpc-server: serve the GPUs when there are any, else the CPU.
  std::vector<ggml_backend_dev_t> devices;
  for (size_t i = 0; i < ggml_backend_dev_count(); i++) {
    ggml_backend_dev_t dev = ggml_backend_dev_get(i);
    const auto type = ggml_backend_dev_type(dev);
    const bool remote = std::string(ggml_backend_reg_name(ggml_backend_dev_backend_reg(dev))).rfind("RPC", 0) == 0;
    if (!remote && (type == GGML_BACKEND_DEVICE_TYPE_GPU || type == GGML_BACKEND_DEVICE_TYPE_IGPU)) devices.push_back(dev);
  }
  if (devices.empty()) {
    ggml_backend_dev_t cpu = ggml_backend_dev_by_type(GGML_BACKEND_DEVICE_TYPE_CPU);
    if (cpu == nullptr) throw Napi::Error::New(env, "no CPU device to serve");
    devices.push_back(cpu);
  }
  ggml_backend_reg_t rpc_reg = ggml_backend_reg_by_name("RPC");
  if (rpc_reg == nullptr) throw Napi::Error::New(env, "this build has no RPC backend (build with GGML_RPC=ON)");
  using StartServerFn = void (*)(const char *, const char *, size_t, size_t, ggml_backend_dev_t *);
  auto start = reinterpret_cast<StartServerFn>(ggml_backend_reg_get_proc_address(rpc_reg, "ggml_backend_rpc_start_server"));
  if (start == nullptr) throw Napi::Error::New(env, "the RPC backend lacks ggml_backend_rpc_start_server");
  const std::string endpoint = host + ":" + std::to_string(port);
  start(endpoint.c_str(), /*cache_dir =*/ nullptr, static_cast<size_t>(threads), devices.size(), devices.data());
  // ggml returns only when it could not set up (bind/listen failed); it printed why.
  throw Napi::Error::New(env, "rpc server on " + endpoint + " could not start (address in use or not available?)");
}

// makeTestModel({out, vocab, shape, quant, seed, std?, logitScale?, addedTokens?, pooling?, chatTemplate?}) -> {bytes, params, vocabSize, fim}
Napi::Value MakeTestModel(const Napi::CallbackInfo & info) {
  Napi::Env env = info.Env();
  if (!info[0].IsObject()) throw Napi::TypeError::New(env, "makeTestModel expects an options object");
  const Napi::Object opts = info[0].As<Napi::Object>();
  TestModelSpec spec;
  spec.out = Str(opts.Get("out"), "out");
  spec.vocab = Str(opts.Get("vocab"), "vocab");
  spec.shape = Str(opts.Get("shape"), "shape");
  spec.quant = Str(opts.Get("quant"), "quant");
  spec.seed = static_cast<uint64_t>(IntIn(opts.Get("seed"), "seed", 0, (int64_t{1} << 53) - 1));
  const Napi::Value std_value = opts.Get("std");
  if (!std_value.IsUndefined()) {
    const double s = std_value.IsNumber() ? std_value.As<Napi::Number>().DoubleValue() : NAN;
    if (!std::isfinite(s) || s <= 0 || s > 100) throw Napi::RangeError::New(env, "std must be a number in (0, 100]");
    spec.std = static_cast<float>(s);
  }
  const Napi::Value logit_scale = opts.Get("logitScale");
  if (!logit_scale.IsUndefined()) {
    const double s = logit_scale.IsNumber() ? logit_scale.As<Napi::Number>().DoubleValue() : NAN;
    if (!std::isfinite(s) || s <= 0 || s > 100) throw Napi::RangeError::New(env, "logitScale must be a number in (0, 100]");
    spec.logit_scale = static_cast<float>(s);
  }
  const Napi::Value pooling = opts.Get("pooling");
  if (!pooling.IsUndefined()) spec.pooling = Str(pooling, "pooling");
  const Napi::Value chat_template = opts.Get("chatTemplate");
  if (!chat_template.IsUndefined()) {
    spec.chat_template = Str(chat_template, "chatTemplate");
    if (spec.chat_template.empty()) throw Napi::RangeError::New(env, "chatTemplate must not be empty");
  }
  const Napi::Value ctx_train = opts.Get("ctxTrain");
  if (!ctx_train.IsUndefined()) spec.ctx_train = IntIn(ctx_train, "ctxTrain", 1, int64_t{1} << 24);
  const Napi::Value added = opts.Get("addedTokens");
  if (!added.IsUndefined()) {
    if (!added.IsArray()) throw Napi::TypeError::New(env, "addedTokens must be an array of {id, text, type}");
    const Napi::Array list = added.As<Napi::Array>();
    for (uint32_t i = 0; i < list.Length(); i++) {
      const Napi::Value item = list.Get(i);
      const std::string where = "addedTokens[" + std::to_string(i) + "]";
      if (!item.IsObject()) throw Napi::TypeError::New(env, where + " must be an object {id, text, type}");
      const Napi::Object o = item.As<Napi::Object>();
      TestModelSpec::AddedToken t;
      t.id = IntIn(o.Get("id"), where + ".id", 0, INT32_MAX);
      t.text = Str(o.Get("text"), where + ".text");
      const std::string type = Str(o.Get("type"), where + ".type");
      if (type == "control") t.type = LLAMA_TOKEN_TYPE_CONTROL;
      else if (type == "user") t.type = LLAMA_TOKEN_TYPE_USER_DEFINED;
      else throw Napi::RangeError::New(env, where + ".type must be 'control' or 'user', got '" + type + "'");
      spec.added.push_back(std::move(t));
    }
  }
  if (spec.out.empty()) throw Napi::TypeError::New(env, "out must be a non-empty file path");
  TestModelResult r;
  try {
    r = WriteTestModel(spec);
  } catch (const std::invalid_argument & e) {
    throw Napi::RangeError::New(env, e.what());
  } catch (const std::exception & e) {
    throw Napi::Error::New(env, e.what());
  }
  Napi::Object out = Napi::Object::New(env);
  out.Set("bytes", static_cast<double>(r.bytes));
  out.Set("params", static_cast<double>(r.params));
  out.Set("vocabSize", static_cast<double>(r.vocab_size));
  if (r.fim_prefix >= 0 && r.fim_suffix >= 0 && r.fim_middle >= 0) {
    Napi::Object fim = Napi::Object::New(env);
    fim.Set("prefix", r.fim_prefix);
    fim.Set("suffix", r.fim_suffix);
    fim.Set("middle", r.fim_middle);
    out.Set("fim", fim);
  } else {
    out.Set("fim", env.Null());
  }
  return out;
}

Napi::Object CpuVariantToJs(Napi::Env env, const CpuVariantDesc & v) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("name", v.name);
  o.Set("score", v.score);
  o.Set("amx", v.amx);
  return o;
}

}  // namespace

Napi::Object BackendReportToJs(Napi::Env env, const BackendLoadReport & r) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("cpuVariant", r.cpu_variant.empty() ? env.Null() : Napi::String::New(env, r.cpu_variant));
  Napi::Array variants = Napi::Array::New(env, r.cpu_variants.size());
  for (size_t i = 0; i < r.cpu_variants.size(); i++) variants.Set(static_cast<uint32_t>(i), CpuVariantToJs(env, r.cpu_variants[i]));
  o.Set("cpuVariants", variants);
  Napi::Array loaded = Napi::Array::New(env, r.loaded.size());
  for (size_t i = 0; i < r.loaded.size(); i++) {
    Napi::Object l = Napi::Object::New(env);
    l.Set("name", r.loaded[i].name);
    l.Set("path", r.loaded[i].path);
    loaded.Set(static_cast<uint32_t>(i), l);
  }
  o.Set("loaded", loaded);
  Napi::Array failed = Napi::Array::New(env, r.failed.size());
  for (size_t i = 0; i < r.failed.size(); i++) {
    Napi::Object f = Napi::Object::New(env);
    f.Set("path", r.failed[i].path);
    f.Set("error", r.failed[i].error);
    failed.Set(static_cast<uint32_t>(i), f);
  }
  o.Set("failed", failed);
  return o;
}

namespace {

// cpuVariants(): CpuVariant[] (best first; loads nothing)
Napi::Value CpuVariants(const Napi::CallbackInfo & info) {
  const std::vector<CpuVariantDesc> variants = ListCpuVariants();
  Napi::Array out = Napi::Array::New(info.Env(), variants.size());
  for (size_t i = 0; i < variants.size(); i++) out.Set(static_cast<uint32_t>(i), CpuVariantToJs(info.Env(), variants[i]));
  return out;
}

// loadBackends({cpuVariant?, dirs?}): BackendReport
Napi::Value LoadBackendsJs(const Napi::CallbackInfo & info) {
  Napi::Env env = info.Env();
  BackendLoadOptions opts;
  if (!info[0].IsUndefined()) {
    if (!info[0].IsObject()) throw Napi::TypeError::New(env, "loadBackends expects an options object");
    const Napi::Object o = info[0].As<Napi::Object>();
    if (!o.Get("cpuVariant").IsUndefined()) opts.cpu_variant = Str(o.Get("cpuVariant"), "cpuVariant");
    const Napi::Value dirs = o.Get("dirs");
    if (!dirs.IsUndefined()) {
      if (!dirs.IsArray()) throw Napi::TypeError::New(env, "dirs must be an array of folder paths");
      const Napi::Array arr = dirs.As<Napi::Array>();
      for (uint32_t i = 0; i < arr.Length(); i++) opts.dirs.push_back(Str(arr.Get(i), "dirs[]"));
    }
  }
  try {
    return BackendReportToJs(env, LoadBackends(opts));
  } catch (const std::exception & e) {
    throw Napi::Error::New(env, e.what());
  }
}

// makeTestProjector({out, model, seed}) -> {bytes, imageSize, imageTokens}
Napi::Value MakeTestProjector(const Napi::CallbackInfo & info) {
  Napi::Env env = info.Env();
  if (!info[0].IsObject()) throw Napi::TypeError::New(env, "makeTestProjector expects an options object");
  const Napi::Object opts = info[0].As<Napi::Object>();
  TestProjectorSpec spec;
  spec.out = Str(opts.Get("out"), "out");
  spec.model = Str(opts.Get("model"), "model");
  spec.seed = static_cast<uint64_t>(IntIn(opts.Get("seed"), "seed", 0, (int64_t{1} << 53) - 1));
  TestProjectorResult r;
  try {
    r = WriteTestProjector(spec);
  } catch (const std::invalid_argument & e) {
    throw Napi::RangeError::New(env, e.what());
  } catch (const std::exception & e) {
    throw Napi::Error::New(env, e.what());
  }
  Napi::Object o = Napi::Object::New(env);
  o.Set("bytes", static_cast<double>(r.bytes));
  o.Set("imageSize", r.image_size);
  o.Set("imageTokens", r.image_tokens);
  return o;
}

Napi::Value SystemInfo(const Napi::CallbackInfo & info) {
  EnsureBackendsLoaded();
  return Napi::String::New(info.Env(), llama_print_system_info());
}

}  // namespace

void InitTools(Napi::Env env, Napi::Object exports) {
  exports.Set("listDevices", Napi::Function::New(env, ListDevices, "listDevices"));
  exports.Set("rpcServe", Napi::Function::New(env, RpcServe, "rpcServe"));
  exports.Set("makeTestModel", Napi::Function::New(env, MakeTestModel, "makeTestModel"));
  exports.Set("makeTestProjector", Napi::Function::New(env, MakeTestProjector, "makeTestProjector"));
  exports.Set("systemInfo", Napi::Function::New(env, SystemInfo, "systemInfo"));
  exports.Set("cpuVariants", Napi::Function::New(env, CpuVariants, "cpuVariants"));
  exports.Set("loadBackends", Napi::Function::New(env, LoadBackendsJs, "loadBackends"));
  exports.Set("testModelVersion", Napi::Number::New(env, kTestModelVersion));
}

}  // namespace strata
