// The one set of JS argument checks for every N-API entry point (engine options and requests in
// engine_js.cpp, the Engine methods in engine_wrap.cpp, the process-wide tools in tools.cpp).
// Each throws Napi::TypeError (wrong kind) or Napi::RangeError (out of range) with a message that
// names the field: "<field> must be …". JS thread only.
#pragma once
#include <napi.h>

#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

namespace strata::js {

constexpr double kMaxSafeInteger = 9007199254740991.0;

// A number as JS would print it (integers without a fraction, NaN and the infinities by name).
inline std::string Num(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
  if (v == std::floor(v) && std::fabs(v) <= kMaxSafeInteger) return std::to_string(static_cast<int64_t>(v));
  return std::to_string(v);
}

[[noreturn]] inline void TypeErr(Napi::Env env, const std::string& msg) { throw Napi::TypeError::New(env, msg); }
[[noreturn]] inline void RangeErr(Napi::Env env, const std::string& msg) { throw Napi::RangeError::New(env, msg); }

// The key is there and not undefined.
inline bool Present(const Napi::Object& o, const char* key) {
  if (!o.Has(key)) return false;
  const Napi::Value v = o.Get(key);
  return !v.IsUndefined();
}

// An object whose keys a parser reads through Has/Get; RejectUnread() then refuses any key it never
// read, so a field that addon.d.ts declares but the parser lacks is an error, not silently dropped.
class Fields {
 public:
  Fields(const Napi::Object& o, std::string where) : o_(o), where_(std::move(where)) {}
  const Napi::Object& Object() const { return o_; }
  bool Has(const char* key) {
    read_.emplace_back(key);
    return Present(o_, key);
  }
  Napi::Value Get(const char* key) {
    read_.emplace_back(key);
    return o_.Get(key);
  }
  // `elsewhere`: keys another function reads (e.g. the callbacks of the engine options).
  void RejectUnread(std::initializer_list<const char*> elsewhere = {}) const {
    const Napi::Array keys = o_.GetPropertyNames();
    for (uint32_t i = 0; i < keys.Length(); ++i) {
      const std::string k = keys.Get(i).ToString().Utf8Value();
      if (o_.Get(k).IsUndefined()) continue;
      bool known = false;
      for (const auto& r : read_) known = known || r == k;
      for (const char* e : elsewhere) known = known || k == e;
      if (!known) TypeErr(o_.Env(), where_ + " has an unknown key '" + k + "'");
    }
  }

 private:
  Napi::Object o_;
  std::string where_;
  std::vector<std::string> read_;
};

inline double Number(const Napi::Value& v, const std::string& field) {
  if (!v.IsNumber()) TypeErr(v.Env(), field + " must be a number");
  return v.As<Napi::Number>().DoubleValue();
}

inline double FiniteIn(const Napi::Value& v, const std::string& field, double lo, double hi) {
  const double x = Number(v, field);
  if (!std::isfinite(x) || x < lo || x > hi) {
    RangeErr(v.Env(), field + " must be between " + Num(lo) + " and " + Num(hi) + " (got " + Num(x) + ")");
  }
  return x;
}

// An integer in [lo, hi]: a fraction is a TypeError, a value outside a RangeError.
inline int64_t IntIn(const Napi::Value& v, const std::string& field, double lo, double hi) {
  const double x = Number(v, field);
  if (!std::isfinite(x) || x != std::floor(x)) TypeErr(v.Env(), field + " must be an integer (got " + Num(x) + ")");
  if (x < lo || x > hi) RangeErr(v.Env(), field + " must be between " + Num(lo) + " and " + Num(hi) + " (got " + Num(x) + ")");
  return static_cast<int64_t>(x);
}

inline std::string Str(const Napi::Value& v, const std::string& field) {
  if (!v.IsString()) TypeErr(v.Env(), field + " must be a string");
  return v.As<Napi::String>().Utf8Value();
}

inline std::string NonEmptyStr(const Napi::Value& v, const std::string& field) {
  if (!v.IsString() || v.As<Napi::String>().Utf8Value().empty()) TypeErr(v.Env(), field + " must be a non-empty string");
  return v.As<Napi::String>().Utf8Value();
}

inline std::vector<std::string> StrArray(const Napi::Value& v, const std::string& field, size_t max_n) {
  if (!v.IsArray()) TypeErr(v.Env(), field + " must be an array of strings");
  const Napi::Array a = v.As<Napi::Array>();
  if (a.Length() > max_n) RangeErr(v.Env(), field + " has more than " + std::to_string(max_n) + " entries");
  std::vector<std::string> out;
  for (uint32_t i = 0; i < a.Length(); ++i) out.push_back(Str(a.Get(i), field + "[" + std::to_string(i) + "]"));
  return out;
}

// Positional argument `i` as a boolean, `def` when it is missing or undefined.
inline bool OptionalBool(const Napi::CallbackInfo& info, size_t i, const std::string& field, bool def) {
  if (info.Length() <= i || info[i].IsUndefined()) return def;
  if (!info[i].IsBoolean()) TypeErr(info.Env(), field + " must be a boolean");
  return info[i].As<Napi::Boolean>().Value();
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

// An entry point that returns a promise: what `start` throws (a failed argument check) becomes
// the promise's rejection, as JS expects of an async function, never a synchronous throw.
template <typename Start>
Napi::Value RejectOnThrow(Napi::Env env, Start start) {
  try {
    return start();
  } catch (const Napi::Error& e) {
    auto d = Napi::Promise::Deferred::New(env);
    d.Reject(e.Value());
    return d.Promise();
  }
}

// Queues an AsyncWorker that settles its own Promise::Deferred and returns that promise.
template <typename Worker>
Napi::Promise Queued(Worker* worker) {
  Napi::Promise p = worker->Promise();
  worker->Queue();
  return p;
}

}  // namespace strata::js
