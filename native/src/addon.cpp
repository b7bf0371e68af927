// Module entry: each part of the native surface registers itself (see native/lib/addon.d.ts).
#include <napi.h>

#include "engine_wrap.h"
#include "fit_js.h"
#include "tools.h"

static Napi::Object Init(Napi::Env env, Napi::Object exports) {
  strata::InitTools(env, exports);
  strata::InitEngine(env, exports);
  strata::InitFit(env, exports);
  return exports;
}

NODE_API_MODULE(strata, Init)
